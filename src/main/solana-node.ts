import { z } from 'zod';
import { SolanaSandboxNode } from '../embedded/solana-node';

// The sandbox's Solana node as a process of its own (src/embedded/solana.ts starts it): the API, the
// worker and the watchers reach it over JSON-RPC, as they would reach a real cluster's RPC.
const env = z.object({
  SOLANA_NODE_PORT: z.coerce.number().int().min(1).max(65_535),
  SOLANA_SLOT_MS: z.coerce.number().int().min(10).max(60_000).default(400),
  SOLANA_NODE_STATE: z.string().optional(),
  SOLANA_BLOCKHASH_VALIDITY_SLOTS: z.coerce.number().int().min(2).max(1_000).default(150),
}).parse(process.env);

void (async () => {
  const node = new SolanaSandboxNode({ slotMs: env.SOLANA_SLOT_MS, stateFile: env.SOLANA_NODE_STATE, blockhashValiditySlots: env.SOLANA_BLOCKHASH_VALIDITY_SLOTS });
  const server = await node.listen(env.SOLANA_NODE_PORT);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => void server.close().then(() => process.exit(0)));
  }
})();
