import { z } from 'zod';

/**
 * The timers of the platform's long-running loops (docs/CONFIGURATION.md): webhook delivery, the
 * wallet watchers, MPC sessions, the stray-deposit scan.
 */
export const timerEnv = {
  /**
   * Stray chain deposits (another amount, a repeat, or one that arrives after its transfer stopped
   * waiting) go back to their sender: the Temporal schedule that looks for them runs this often…
   */
  STRAY_DEPOSIT_SCAN_SECONDS: z.coerce.number().int().min(1).max(86_400).default(60),
  /** …and reads the deposit addresses of transfers created within this many days. */
  STRAY_DEPOSIT_WATCH_DAYS: z.coerce.number().positive().max(3_650).default(30),
  /**
   * Webhook delivery (docs/WEBHOOKS.md): a failed attempt is tried again after this many milliseconds,
   * doubling each time (with jitter) up to an hour…
   */
  WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().min(1).max(3_600_000).default(30_000),
  /** …for this long after the event, after which the delivery fails and its endpoint is marked failing. */
  WEBHOOK_RETRY_WINDOW_HOURS: z.coerce.number().positive().max(720).default(72),
  /** An endpoint that has not answered within this many milliseconds has failed the attempt. */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(20_000).default(10_000),
  /** How soon an endpoint's delivery loop looks again after a look that sent something, or its first look that found nothing… */
  WEBHOOK_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(500),
  /** …and the longest it waits once the endpoint is quiet (the waits double up to this; a scheduled retry is never waited past). */
  WEBHOOK_IDLE_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(2_000),
  /** How long one wallet watcher activity runs before the next (it looks at the chain every poll interval meanwhile). */
  WALLET_WATCH_PERIOD_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(300_000),
  /** How long an MPC wallet's key generation waits for the customer's signer before the wallet fails (docs/MPC.md). */
  MPC_KEYGEN_EXPIRY_MS: z.coerce.number().int().min(1_000).max(7 * 86_400_000).default(3_600_000),
  /** How long a transfer from an MPC wallet waits for the customer's co-signature before it is canceled (docs/MPC.md). */
  MPC_SIGNATURE_EXPIRY_MS: z.coerce.number().int().min(1_000).max(30 * 86_400_000).default(86_400_000),
  /**
   * How often a pending co-signature looks whether its transaction's nonce was used by another
   * transaction of the wallet (a recovery signed without the platform); then it ends at once.
   */
  MPC_NONCE_CHECK_MS: z.coerce.number().int().min(1_000).max(86_400_000).default(300_000),
};
