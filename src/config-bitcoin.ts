import { z } from 'zod';

/**
 * Configuration of Bitcoin (docs/TRANSFERS.md, docs/CONFIGURATION.md): the node's JSON-RPC address,
 * its network, how deep a payment must be, and the fee policy.
 */
export const bitcoinEnv = {
  /**
   * The node's JSON-RPC address, credentials in it (http://user:pass@host:port): btcd or Bitcoin
   * Core. `npm start` and the tests run the sandbox's btcd in regtest on this machine
   * (BITCOIN_NODE_PORT); unset elsewhere, bitcoin is unavailable.
   */
  BITCOIN_RPC_URL: z.string().url().refine((u) => /^https?:\/\//.test(u), { message: 'must be an http(s) URL' }).optional(),
  /** Which network the node is on: addresses and keys follow it. Unset: regtest on a local node, mainnet elsewhere. */
  BITCOIN_NETWORK: z.enum(['mainnet', 'testnet', 'regtest']).optional(),
  /** Blocks deep before a payment counts (a deposit, a payout, a wallet's balance): the spec's "~60 min" is 6. */
  BITCOIN_CONFIRMATIONS: z.coerce.number().int().min(1).max(100).default(6),
  /** The lowest fee rate paid, in satoshis per virtual byte, whatever the node estimates. */
  BITCOIN_MIN_FEE_RATE: z.coerce.number().int().min(1).max(10_000).default(2),
  /**
   * The highest fee rate paid, in satoshis per virtual byte: the node's estimate and each replacement
   * (RBF) stop there, so a fee spike or a payout no block takes never pays more. A payout at the
   * ceiling waits for a block; the stuck-transfer alarm names it.
   */
  BITCOIN_MAX_FEE_RATE: z.coerce.number().int().min(1).max(10_000).default(1_000),
  /** A payout not in a block this long after it was signed is replaced by one paying a higher fee (RBF). */
  BITCOIN_RBF_AFTER_SECONDS: z.coerce.number().int().min(1).max(86_400).default(1_800),
  /** How long one process answers a look at the node's tip again, instead of asking (every pending payout polls). */
  BITCOIN_INDEX_REUSE_MS: z.coerce.number().int().min(0).max(60_000).default(250),
  /**
   * How long a wallet's send waits, inside one try, for the change of its own sends still out (a
   * chain of 25 unconfirmed transactions is full until the next block) before the try fails and is
   * tried again: under the chain activities' 10 s timeout.
   */
  BITCOIN_COIN_WAIT_MS: z.coerce.number().int().min(0).max(9_000).default(8_000),
  /** The sandbox node's RPC port under `npm start`. */
  BITCOIN_NODE_PORT: z.coerce.number().int().min(1).max(65_535).default(18_443),
  /** The sandbox node's block time (ms): Bitcoin's is ten minutes; 0 mines only on request. */
  BITCOIN_BLOCK_MS: z.coerce.number().int().min(0).max(3_600_000).default(2_000),
};
