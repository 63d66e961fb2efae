// EVM chains over JSON-RPC (viem): the adapter and what the embedded stack and tests need to deploy
// and fund the sandbox stablecoins.
export { EvmChainAdapter } from './adapter';
export { ChainKeys, sandboxTokenAddress } from './keys';
export { LOCAL_CHAIN_IDS, STABLECOIN_ABI } from './node';
