import { createPublicClient, encodeFunctionData, erc20Abi, getAddress, http, serializeTransaction, type Hex } from 'viem';
import { ASSET_SCALE, parseAmount } from '../domain/money';

// Recovery without the platform (docs/MPC.md): the customer builds a token transfer from the
// wallet's address with any node of the chain, signs it with the device and backup shares
// (MpcSigner.signWithoutPlatform) and broadcasts it there.

/** An unsigned EIP-1559 token transfer from `from`, priced and numbered by the node at `rpcUrl`. */
export async function unsignedTokenTransfer(q: { rpcUrl: string; from: string; token: string; currency: string; to: string; amount: string }): Promise<Hex> {
  const scale = ASSET_SCALE[q.currency];
  const amountMinor = scale === undefined ? null : parseAmount(q.amount, scale);
  if (amountMinor === null || amountMinor <= 0n) throw new Error(`not an amount of ${q.currency}: ${q.amount}`);
  const client = createPublicClient({ transport: http(q.rpcUrl) });
  const from = getAddress(q.from);
  const data = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [getAddress(q.to), amountMinor] });
  const [chainId, nonce, fees, gas] = await Promise.all([
    client.getChainId(), client.getTransactionCount({ address: from, blockTag: 'pending' }), client.estimateFeesPerGas(),
    client.estimateGas({ account: from, to: getAddress(q.token), data }),
  ]);
  return serializeTransaction({ type: 'eip1559', chainId, nonce, to: getAddress(q.token), data, gas: gas + gas / 5n, ...fees });
}

export async function broadcast(rpcUrl: string, signed: Hex): Promise<Hex> {
  return createPublicClient({ transport: http(rpcUrl) }).sendRawTransaction({ serializedTransaction: signed });
}
