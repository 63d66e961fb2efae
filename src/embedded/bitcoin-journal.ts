import fs from 'node:fs';
import type { BitcoinRpc } from '../chains/bitcoin/rpc';

// btcd (v0.24 and v0.26 alike) comes back from a clean stop in regtest without the blocks it mined
// since it started: its chain state is not written back. The sandbox keeps every block it has seen
// in a journal beside the chain (one raw block per line, line n = height n) and, once btcd answers,
// gives it back what it lost (submitblock), so a restart keeps the chain as README promises.

/** The journal's blocks, by height from 1. */
function readJournal(file: string): string[] {
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, 'utf8').split('\n').filter((line) => line.length > 0);
}

/** Appends the blocks the node holds above the journal's last one. */
export async function journalBlocks(rpc: BitcoinRpc, file: string): Promise<void> {
  const known = readJournal(file).length;
  const tip = await rpc.blockCount();
  const lines: string[] = [];
  for (let height = known + 1; height <= tip; height++) lines.push(await rpc.rawBlock(await rpc.blockHash(height)));
  if (lines.length > 0) fs.appendFileSync(file, `${lines.join('\n')}\n`);
}

/** Gives the node the journal's blocks above its tip; answers how many it took back. */
export async function restoreJournalBlocks(rpc: BitcoinRpc, file: string): Promise<number> {
  const journal = readJournal(file);
  const tip = await rpc.blockCount();
  for (let height = tip + 1; height <= journal.length; height++) {
    const refused = await rpc.call<string | null>('submitblock', [journal[height - 1]]);
    if (refused) throw new Error(`the sandbox Bitcoin node refused block ${height} of its journal (${file}): ${refused}`);
  }
  return Math.max(0, journal.length - tip);
}
