import fs from 'node:fs';
import path from 'node:path';
import { createPublicClient, createTestClient, createWalletClient, getAddress, http, parseEther, publicActions, type Hex } from 'viem';
import { ChainKeys, LOCAL_CHAIN_IDS, sandboxTokenAddress, STABLECOIN_ABI } from '../chains/evm';
import stablecoin from '../../contracts/Stablecoin.json';
import { EVM_CHAINS, RAILS, type EvmChain } from '../domain/rails';
import { ASSET_SCALE } from '../domain/money';
import { startServiceProcess, waitUntilAnswering, type ServiceProcess } from './service-process';

/** The receiver the sandbox stablecoins block, like USDC's blacklist: a payout to it is undeliverable. */
export const SANDBOX_BLOCKED_ADDRESS = getAddress('0x00000000000000000000000000000000000b10c5');
/** Float minted to the treasury on a fresh local chain, per stablecoin (whole units). */
const TREASURY_FLOAT = 1_000_000_000n;

/** The anvil binary from npm (@foundry-rs/anvil-<platform>), or ANVIL_PATH. */
export function resolveAnvil(): string {
  if (process.env.ANVIL_PATH) return process.env.ANVIL_PATH;
  const platform = `${process.platform === 'win32' ? 'win32' : process.platform}-${process.arch === 'x64' ? 'amd64' : process.arch}`;
  try {
    return path.join(path.dirname(require.resolve(`@foundry-rs/anvil-${platform}/package.json`)), 'bin', 'anvil');
  } catch {
    throw new Error(`No anvil binary for ${platform}: install @foundry-rs/anvil-${platform} or set ANVIL_PATH, or set EVM_RPC_URLS`);
  }
}

/**
 * One local anvil node per EVM chain (distinct chain ids, a block every second so confirmations
 * accrue), with the sandbox stablecoins deployed. With a state directory the chains survive restarts.
 */
export async function startAnvilNodes(opts: { basePort: number; mnemonic: string; stateDir?: string; blockTimeSeconds?: number }) {
  const anvil = resolveAnvil();
  const nodes: ServiceProcess[] = [];
  const urls: Record<string, string> = {};
  const keys = new ChainKeys(opts.mnemonic);
  const stopAll = async () => {
    await Promise.all(nodes.map((n) => n.stop()));
  };
  try {
    await Promise.all(EVM_CHAINS.map(async (chain, i) => {
      const port = opts.basePort + i;
      // No --mnemonic: a command line is visible to every local user. Our keys get their ether over RPC.
      const args = ['--port', String(port), '--host', '127.0.0.1', '--chain-id', String(LOCAL_CHAIN_IDS[chain]),
        '--block-time', String(opts.blockTimeSeconds ?? 1), '--silent'];
      let pidFile: string | undefined;
      if (opts.stateDir) {
        // Kept chains (`npm start`): saved every second, and stopped after the worker (service-process.ts).
        fs.mkdirSync(opts.stateDir, { recursive: true });
        args.push('--state', path.join(opts.stateDir, `anvil-${chain}.json`), '--state-interval', '1');
        pidFile = path.join(opts.stateDir, `anvil-${chain}.pid`);
      }
      const ports = pidFile ? [{ port, what: `The ${chain} node (anvil)`, setting: `ANVIL_BASE_PORT (the ${EVM_CHAINS.length} EVM chains take ports from it)` }] : [];
      const node = await startServiceProcess({ command: anvil, args, pidFile, ports });
      nodes.push(node);
      const url = `http://127.0.0.1:${port}`;
      const client = createPublicClient({ transport: http(url, { retryCount: 0, timeout: 1000 }) });
      await waitUntilAnswering(node, `anvil at ${url}`, () => client.getBlockNumber(), 150);
      await fundPlatformKeys(url, keys);
      await deploySandboxStablecoins(url, chain, keys);
      urls[chain] = url;
    }));
  } catch (err) {
    await stopAll();
    throw err;
  }
  return {
    urls,
    /** The EVM_RPC_URLS value for other processes. */
    env: Object.entries(urls).map(([c, u]) => `${c}=${u}`).join(','),
    stop: stopAll,
  };
}

/** Ether for gas to the treasury and the sandbox issuer, as anvil gives its own dev accounts. */
async function fundPlatformKeys(url: string, keys: ChainKeys) {
  const client = createTestClient({ mode: 'anvil', transport: http(url) }).extend(publicActions);
  for (const { address } of [keys.treasury, keys.issuer]) {
    if ((await client.getBalance({ address })) === 0n) await client.setBalance({ address, value: parseEther('10000') });
  }
}

/**
 * Deploys each stablecoin the chain lists from the issuer key, with nonce = its position in the list,
 * so that its address is known without a registry; mints the treasury's float and blocks the
 * sandbox's blocked address. Does nothing on a chain where they are already deployed.
 */
export async function deploySandboxStablecoins(url: string, chain: EvmChain, keys: ChainKeys) {
  const publicClient = createPublicClient({ transport: http(url) });
  const wallet = createWalletClient({ account: keys.issuer, transport: http(url) });
  const chainId = await publicClient.getChainId();
  const viemChain = { id: chainId, name: chain, nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [url] } } };
  const currencies = RAILS[chain].currencies;
  const deployed = await publicClient.getCode({ address: sandboxTokenAddress(keys, chain, currencies[currencies.length - 1]) });
  if (deployed && deployed !== '0x') return;
  const nonce = await publicClient.getTransactionCount({ address: keys.issuer.address });
  if (nonce !== 0) throw new Error(`${chain}: the issuer key has sent transactions but the stablecoins are missing; use a fresh chain`);
  const hashes: Hex[] = [];
  for (const [i, currency] of currencies.entries()) {
    hashes.push(await wallet.deployContract({
      abi: STABLECOIN_ABI, bytecode: stablecoin.bytecode as Hex, chain: viemChain, nonce: i,
      args: [`Sandbox ${currency.toUpperCase()}`, currency.toUpperCase(), ASSET_SCALE[currency]],
    }));
  }
  for (const hash of hashes) await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 100 });
  let next = currencies.length;
  const setup: Hex[] = [];
  for (const currency of currencies) {
    const address = sandboxTokenAddress(keys, chain, currency);
    setup.push(await wallet.writeContract({ address, abi: STABLECOIN_ABI, functionName: 'mint', chain: viemChain, nonce: next++,
      args: [keys.treasury.address, TREASURY_FLOAT * 10n ** BigInt(ASSET_SCALE[currency])] }));
    setup.push(await wallet.writeContract({ address, abi: STABLECOIN_ABI, functionName: 'setBlocked', chain: viemChain, nonce: next++,
      args: [SANDBOX_BLOCKED_ADDRESS, true] }));
  }
  for (const hash of setup) await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 100 });
}
