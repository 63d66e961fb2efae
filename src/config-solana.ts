import { z } from 'zod';
import { RAILS } from './domain/rails';

/**
 * Configuration of Solana (docs/TRANSFERS.md, docs/CONFIGURATION.md): the cluster's JSON-RPC address,
 * the stablecoins' mints, and how deep a deposit must be.
 */

/** The mints of Circle's USDC and Tether's USDT on Solana's mainnet: used off this machine unless SOLANA_TOKEN_MINTS names others. */
export const SOLANA_MAINNET_MINTS: Record<string, string> = {
  usdc: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
  usdt: 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB',
};

const BASE58_ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

export const solanaEnv = {
  /**
   * Solana's JSON-RPC address. `npm start` and the tests run the sandbox's node (LiteSVM) on this
   * machine (SOLANA_NODE_PORT); unset elsewhere, solana is unavailable.
   */
  SOLANA_RPC_URL: z.string().url().refine((u) => /^https?:\/\//.test(u), { message: 'must be an http(s) URL' }).optional(),
  /** The stablecoins' mints when not Solana mainnet's: "usdc=<mint>,usdt=<mint>". A local node uses the sandbox's own. */
  SOLANA_TOKEN_MINTS: z.string().optional().transform((v, ctx) => {
    const out: Record<string, string> = {};
    for (const part of (v ?? '').split(',').map((p) => p.trim()).filter(Boolean)) {
      const [currency, mint] = part.split('=');
      if (!RAILS.solana.currencies.includes(currency ?? '') || !BASE58_ADDRESS.test(mint ?? '')) {
        ctx.addIssue({ code: 'custom', message: `'${part}' is not currency=<base58 mint> for ${RAILS.solana.currencies.join('/')}` });
        return z.NEVER;
      }
      out[currency!] = mint!;
    }
    return out;
  }),
  /**
   * When a deposit counts: `finalized` (32 rooted slots, about 13 s) or `confirmed` (a supermajority
   * voted, about 0.4 s). Unset: finalized off this machine, confirmed on a local node.
   */
  SOLANA_DEPOSIT_COMMITMENT: z.enum(['confirmed', 'finalized']).optional(),
  /** The sandbox node's port under `npm start`. */
  SOLANA_NODE_PORT: z.coerce.number().int().min(1).max(65_535).default(8899),
  /** The sandbox node's slot time (ms): Solana's is about 400. */
  SOLANA_SLOT_MS: z.coerce.number().int().min(10).max(60_000).default(400),
};
