import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { BitcoinRpc } from '../chains/bitcoin/rpc';
import { startServiceProcess } from '../embedded/service-process';

// The sandbox's Bitcoin node as a process of its own (src/embedded/bitcoin.ts starts it): btcd in
// regtest, and its block clock. btcd mines only when asked (`generate`); a real network finds a block
// every ten minutes, the sandbox every BITCOIN_BLOCK_MS (0: only when a test asks).
const env = z.object({
  BTCD_PATH: z.string(),
  BITCOIN_NODE_PORT: z.coerce.number().int().min(1).max(65_535),
  BITCOIN_NODE_DIR: z.string(),
  BITCOIN_BLOCK_MS: z.coerce.number().int().min(0).default(2_000),
  BITCOIN_MINING_ADDRESS: z.string(),
  /** Where btcd's pid is kept under `npm start`: a start after this process was killed outright ends the btcd it left. */
  BITCOIN_BTCD_PID_FILE: z.string().optional(),
}).parse(process.env);

export const SANDBOX_RPC_USER = 'sandbox';

void (async () => {
  fs.mkdirSync(env.BITCOIN_NODE_DIR, { recursive: true });
  const btcd = await startServiceProcess({
    command: env.BTCD_PATH,
    args: [
      '--regtest', `--datadir=${path.join(env.BITCOIN_NODE_DIR, 'data')}`, `--logdir=${path.join(env.BITCOIN_NODE_DIR, 'logs')}`, '--debuglevel=warn',
      '--notls', `--rpcuser=${SANDBOX_RPC_USER}`, `--rpcpass=${SANDBOX_RPC_USER}`, `--rpclisten=127.0.0.1:${env.BITCOIN_NODE_PORT}`,
      '--rpcmaxclients=200', '--rpcmaxconcurrentreqs=200', '--nolisten', '--txindex', `--miningaddr=${env.BITCOIN_MINING_ADDRESS}`,
    ],
    pidFile: env.BITCOIN_BTCD_PID_FILE,
  });
  const rpc = new BitcoinRpc(`http://${SANDBOX_RPC_USER}:${SANDBOX_RPC_USER}@127.0.0.1:${env.BITCOIN_NODE_PORT}`);
  let timer: NodeJS.Timeout | undefined;
  const mine = () => {
    timer = setTimeout(() => void rpc.call('generate', [1]).catch(() => undefined).finally(mine), env.BITCOIN_BLOCK_MS);
  };
  if (env.BITCOIN_BLOCK_MS > 0) mine();
  let stopping = false;
  void btcd.exit.then(async () => {
    if (stopping) return;
    process.stderr.write(`btcd exited: ${btcd.stderrTail()}\n`);
    await btcd.stop(); // its pid file goes with it
    process.exit(1);
  });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      stopping = true;
      clearTimeout(timer);
      void btcd.stop().then(() => process.exit(0));
    });
  }
})();
