import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodeBlock } from '../chains/bitcoin/blocks';
import { buildSpend, type Coin } from '../chains/bitcoin/coins';
import { BITCOIN_NETWORKS, BitcoinKeys } from '../chains/bitcoin/keys';
import { BitcoinRpc } from '../chains/bitcoin/rpc';
import { journalBlocks, restoreJournalBlocks } from './bitcoin-journal';
import { endLeftoverProcess, ensurePortFree, startServiceProcess, waitUntilAnswering } from './service-process';

/**
 * Blocks mined on a fresh sandbox chain: regtest activates segwit by miners' signalling, three
 * windows of 144 blocks in; by then the faucet's first rewards are spendable (100 blocks deep) too.
 */
const FIRST_BLOCKS = 450;
/** The treasury's float on a fresh sandbox chain: this many coins of 5 BTC, so payouts in parallel each find their own. */
const FLOAT_COINS = 100;
const FLOAT_COIN_SATS = 500_000_000n;

/**
 * The pinned btcd: BTCD_PATH, the shared cache, or a fresh `go install` (scripts/install-btcd.sh).
 * Throws when none can be had.
 */
export function resolveBtcd(): string {
  const result = spawnSync('bash', [path.join(__dirname, '../../scripts/install-btcd.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const found = result.stdout?.trim().split('\n').pop();
  if (result.status !== 0 || !found) throw new Error('btcd is not installed and could not be built (scripts/install-btcd.sh): set BITCOIN_RPC_URL or BTCD_PATH');
  return found;
}

/**
 * The sandbox's Bitcoin node (src/main/bitcoin-node.ts: btcd in regtest and its block clock) as a
 * process beside ours; on a fresh chain, the faucet's first block rewards and the treasury's float.
 * With a state directory the chain survives restarts; without one it lives in a temporary folder.
 */
export async function startBitcoinNode(opts: { port: number; mnemonic: string; stateDir?: string; blockMs?: number; journalMs?: number }) {
  const keys = new BitcoinKeys(opts.mnemonic, 'regtest');
  const dir = opts.stateDir ? path.join(opts.stateDir, 'bitcoin') : fs.mkdtempSync(path.join(os.tmpdir(), 'fp-btcd-'));
  const btcd = resolveBtcd();
  if (opts.stateDir) {
    // btcd's port is checked here, before the process that runs it starts: once a btcd a killed start
    // left behind is ended, a port still held is another program's, and waiting for an answer on it
    // would take that program's node for ours.
    await endLeftoverProcess(path.join(opts.stateDir, 'bitcoin.pid'), process.execPath);
    await endLeftoverProcess(path.join(opts.stateDir, 'btcd.pid'), btcd);
    await ensurePortFree({ port: opts.port, what: 'The sandbox Bitcoin node (btcd)', setting: 'BITCOIN_NODE_PORT' });
  }
  const node = await startServiceProcess({
    command: process.execPath, args: ['--import', 'tsx', path.join(__dirname, '../main/bitcoin-node.ts')],
    env: {
      ...process.env, BTCD_PATH: btcd, BITCOIN_NODE_PORT: String(opts.port), BITCOIN_NODE_DIR: dir, BITCOIN_BLOCK_MS: String(opts.blockMs ?? 2_000),
      BITCOIN_MINING_ADDRESS: keys.faucet.address, ...(opts.stateDir ? { BITCOIN_BTCD_PID_FILE: path.join(opts.stateDir, 'btcd.pid') } : {}),
    },
    pidFile: opts.stateDir ? path.join(opts.stateDir, 'bitcoin.pid') : undefined,
  });
  const url = `http://sandbox:sandbox@127.0.0.1:${opts.port}`;
  const rpc = new BitcoinRpc(url);
  // A kept chain (`npm start`) journals its blocks: at each stop, and every JOURNAL_MS meanwhile.
  const journal = opts.stateDir ? path.join(dir, 'blocks.journal') : undefined;
  let journalTimer: NodeJS.Timeout | undefined;
  // One journaling at a time: two would append the same blocks twice.
  let journaling = Promise.resolve();
  const journalNow = (file: string) => (journaling = journaling.then(() => journalBlocks(rpc, file)).catch(() => undefined));
  const stop = async () => {
    clearInterval(journalTimer);
    if (journal && !node.exited()) await journalNow(journal);
    await node.stop();
    if (!opts.stateDir) fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitUntilAnswering(node, 'the Bitcoin node', () => rpc.blockCount());
    if (journal) await restoreJournalBlocks(rpc, journal);
    await prepareSandboxBitcoin(rpc, keys);
    if (journal) {
      await journalNow(journal);
      journalTimer = setInterval(() => void journalNow(journal), opts.journalMs ?? 5_000).unref();
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, stop };
}

/** On a fresh chain: the faucet's first rewards, then the treasury's float paid from them and buried under ten blocks. */
export async function prepareSandboxBitcoin(rpc: BitcoinRpc, keys: BitcoinKeys) {
  if ((await rpc.blockCount()) > 0) return;
  await rpc.call('generate', [FIRST_BLOCKS]);
  const network = BITCOIN_NETWORKS.regtest;
  const rewards: Coin[] = [];
  for (let height = 1; height <= 15; height++) {
    const [coinbase] = decodeBlock(await rpc.rawBlock(await rpc.blockHash(height)), network).transactions;
    const out = coinbase!.outputs.find((o) => o.address === keys.faucet.address)!;
    rewards.push({ txid: coinbase!.txid, vout: out.vout, address: out.address!, amountSats: out.amountSats, keyIndex: keys.faucet.index, depth: 0 });
  }
  const float = buildSpend({
    network, outputs: Array.from({ length: FLOAT_COINS }, () => ({ address: keys.treasury.address, amount: FLOAT_COIN_SATS })),
    changeAddress: keys.faucet.address, feeRate: 2n, available: rewards, privateKeyOf: () => keys.faucet.privateKey(), onShort: 'reject',
  });
  await rpc.sendRawTransaction(Buffer.from(float.raw, 'hex'));
  await rpc.call('generate', [10]);
}
