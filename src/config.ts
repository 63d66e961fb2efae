import path from 'node:path';
import { validateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english';
import { getAddress, isAddress, type Hex } from 'viem';
import { z } from 'zod';
import { EVM_CHAINS, isEvmChain, RAILS, type EvmChain } from './domain/rails';
import { bankFileEnv, checkBankFileSettings } from './config-bank-files';
import { solanaEnv } from './config-solana';
import { bitcoinEnv } from './config-bitcoin';
import { timerEnv } from './config-timers';

/**
 * All configuration comes from environment variables, validated once at start.
 * Each bad value is reported by name so an operator can fix it without reading code.
 * docs/CONFIGURATION.md lists every variable.
 */
const optionalUrl = (protocols: string[]) =>
  z
    .string()
    .trim()
    .optional()
    .transform((v) => (v === '' ? undefined : v))
    .refine((v) => v === undefined || protocols.some((p) => v.startsWith(p)), {
      message: `must start with ${protocols.join(' or ')}`,
    });

/** US dollars per unit of each currency, written "eur=1.08,gbp=1.27". */
const usdRateSheet = () => z
  .string()
  .optional()
  .transform((v, ctx) => {
    const out: Record<string, string> = {};
    for (const part of (v ?? '').split(',').map((p) => p.trim()).filter(Boolean)) {
      const [currency, rate] = part.split('=');
      if (!/^[a-z]{3,5}$/.test(currency) || !/^\d+(\.\d{1,8})?$/.test(rate ?? '') || Number(rate) === 0) {
        ctx.addIssue({ code: 'custom', message: `'${part}' is not currency=rate (e.g. eur=1.08)` });
        return z.NEVER;
      }
      out[currency] = rate;
    }
    return out;
  });

/** anvil's well-known development mnemonic: the default for local chains only. */
const ANVIL_TEST_MNEMONIC = 'test test test test test test test test test test test junk';

/** A 32-byte key in base64 (an AES-256 key), or nothing. */
const base64Key = () => z
  .string()
  .optional()
  .refine((v) => v === undefined || v === '' || Buffer.from(v, 'base64').length === 32, {
    message: 'must be 32 bytes encoded in base64 (openssl rand -base64 32)',
  });

/** Keys rotated out, comma-separated, 32 bytes each in base64: they still decrypt, never encrypt. */
const base64KeyList = () => z
  .string()
  .optional()
  .transform((v, ctx) => {
    const keys = (v ?? '').split(',').map((k) => k.trim()).filter(Boolean).map((k) => Buffer.from(k, 'base64'));
    if (keys.some((k) => k.length !== 32)) {
      ctx.addIssue({ code: 'custom', message: 'must be keys of 32 bytes encoded in base64, separated by commas' });
      return z.NEVER;
    }
    return keys;
  });

const port = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback);

const envSchema = z.object({
  PORT: port(3000),
  HOST: z.string().default('127.0.0.1'),
  DATA_DIR: z.string().default('.data'),
  DATABASE_URL: optionalUrl(['postgres://', 'postgresql://']),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(20),
  DATABASE_PREPARED_STATEMENTS: z.enum(['on', 'off']).default('on'),
  PGLITE_PORT: port(55432),
  TEMPORAL_ADDRESS: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v === '' ? undefined : v))
    .refine((v) => v === undefined || /^[^\s:/]+:\d+$/.test(v), { message: 'must be host:port' }),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('financial-platform'),
  TEMPORAL_PORT: port(7233),
  TEMPORAL_UI_PORT: port(8233),
  TEMPORAL_CLI_PATH: z.string().optional(),
  /** Temporal Cloud (docs/DEPLOYMENT.md): an API key, or the client certificate and key files of mTLS. Either turns TLS on. */
  TEMPORAL_API_KEY: z.string().trim().optional().transform((v) => v || undefined),
  TEMPORAL_TLS_CERT_PATH: z.string().trim().optional().transform((v) => v || undefined),
  TEMPORAL_TLS_KEY_PATH: z.string().trim().optional().transform((v) => v || undefined),
  /** The worker's Prometheus endpoint for the Temporal SDK's metrics (host:port); unset: none. */
  TEMPORAL_METRICS_ADDRESS: z.string().trim().optional().transform((v) => v || undefined)
    .refine((v) => v === undefined || /^[^\s/]+:\d+$/.test(v), { message: 'must be host:port' }),
  /**
   * The SDK's workflow stack traces (the Web UI's Stack Trace tab): a stack captured for every promise
   * workflow code makes, about a fifth of the worker's CPU per transfer (docs/BENCHMARKS.md). Off unless
   * turned on to debug a stuck workflow.
   */
  WORKFLOW_STACK_TRACES: z.enum(['on', 'off']).default('off'),
  /**
   * How long a workflow's next task waits for the worker that ran its last one (and caches its state)
   * before any worker may take it: what a crashed worker costs each of its workflows. The SDK's default.
   */
  WORKER_STICKY_QUEUE_TIMEOUT_SECONDS: z.coerce.number().positive().max(300).default(10),
  /** The workflow code bundled ahead of time (`npm run build:workflows`); unset: bundled when the worker starts. */
  WORKFLOW_BUNDLE_PATH: z.string().trim().optional().transform((v) => v || undefined),
  REDIS_URL: optionalUrl(['redis://', 'rediss://']),
  PUBLIC_BASE_URL: optionalUrl(['http://', 'https://']),
  /** Sandbox clock speed-up: 60 makes a sandbox minute pass in one second. */
  SANDBOX_TIME_SCALE: z.coerce.number().min(1).max(1_000_000).default(1),
  /** 32 bytes, base64. Encrypts tax ids, documents and account numbers at rest. */
  DATA_ENCRYPTION_KEY: base64Key(),
  /** Keys rotated out, comma-separated (32 bytes each, base64): they still decrypt, never encrypt. */
  DATA_ENCRYPTION_PREVIOUS_KEYS: base64KeyList(),
  /**
   * Signs the fiat-rail provider's webhook (`POST /provider-webhooks/rails`): inbound deposits and
   * returns. Unset: the webhook is off (the sandbox routes still work).
   */
  RAIL_WEBHOOK_SECRET: z
    .string()
    .optional()
    .refine((v) => !v || v.length >= 32, 'must be at least 32 characters (openssl rand -hex 32)')
    .transform((v) => v || undefined),
  /**
   * The key-encryption key that wraps each wallet's data key (docs/WALLETS.md): 32 bytes, base64.
   * Unset: a key made once under DATA_DIR/keys (for `npm start` and tests; production sets it, or a KMS).
   */
  WALLET_KEK: base64Key().transform((v) => (v ? Buffer.from(v, 'base64') : undefined)),
  /** Earlier KEKs, comma-separated: they still open wallet keys until `keys rewrap` has moved them. */
  WALLET_KEK_PREVIOUS: base64KeyList(),
  /**
   * An AWS KMS key (ARN, id or alias ARN) that wraps wallet data keys instead of WALLET_KEK (which,
   * if set too, then only opens). Region and credentials: the AWS SDK's own (AWS_REGION, AWS_PROFILE, …).
   */
  WALLET_KMS_KEY_ID: z.string().trim().min(1).optional(),
  /** Earlier KMS keys, comma-separated: they still open wallet keys until `keys rewrap` has moved them. */
  WALLET_KMS_KEY_IDS_PREVIOUS: z.string().optional().transform((v) => (v ?? '').split(',').map((k) => k.trim()).filter(Boolean)),
  /** The KMS endpoint, where it is not AWS's own for the region (a VPC endpoint; a local KMS in tests). */
  WALLET_KMS_ENDPOINT: z.url().optional(),
  /** How long a customer has to confirm micro-deposit amounts (14 days; on the sandbox clock in the sandbox). */
  MICRO_DEPOSIT_EXPIRY_HOURS: z.coerce.number().positive().default(24 * 14),
  KYC_LINK_TTL_HOURS: z.coerce.number().positive().default(24 * 30),
  IDEMPOTENCY_RETENTION_HOURS: z.coerce.number().positive().default(24),
  /** An idempotency key left "in progress" by a crashed process may be taken over after this long. */
  IDEMPOTENCY_LOCK_SECONDS: z.coerce.number().positive().default(60),
  /** Where the sanctions list files are (as `lists sync` writes them); default DATA_DIR/sanctions. */
  SANCTIONS_DATA_DIR: z.string().optional(),
  /**
   * `auto`: when SANCTIONS_DATA_DIR holds no lists, the snapshot shipped in data/sanctions-snapshot is
   * loaded (a first start screens without internet); `off`: never.
   */
  SANCTIONS_SNAPSHOT: z.enum(['auto', 'off']).default('auto'),
  /** Production does not clear anybody on a snapshot whose oldest list is older than this (the lists count as unavailable). */
  SANCTIONS_SNAPSHOT_MAX_AGE_DAYS: z.coerce.number().int().min(0).max(3650).default(30),
  /** Score from which a screening reports a potential match (docs/SANCTIONS.md explains the scale). */
  SANCTIONS_MATCH_THRESHOLD: z.coerce.number().min(0.5).max(1).default(0.8),
  /**
   * JSON-RPC address of each EVM chain: "ethereum=http://…,base=http://…". Unset: `npm start` and the
   * test harness run a local anvil node per chain (ANVIL_BASE_PORT, ANVIL_BASE_PORT+1, …).
   */
  EVM_RPC_URLS: z
    .string()
    .optional()
    .transform((v, ctx) => {
      const out: Record<string, string> = {};
      for (const part of (v ?? '').split(',').map((p) => p.trim()).filter(Boolean)) {
        const [chain, url] = part.split(/=(.*)/s);
        if (!isEvmChain(chain) || !/^https?:\/\//.test(url ?? '') || !URL.canParse(url)) {
          ctx.addIssue({ code: 'custom', message: `'${part}' is not chain=http(s)://url for an EVM chain` });
          return z.NEVER;
        }
        out[chain] = url;
      }
      return out;
    }),
  /**
   * The stablecoin contracts of chains that are not local nodes: "ethereum.usdc=0x…,base.usdc=0x…".
   * On a local node the project's sandbox contracts are used; a currency without a contract is unavailable.
   */
  EVM_TOKEN_ADDRESSES: z
    .string()
    .optional()
    .transform((v, ctx) => {
      const out: Partial<Record<EvmChain, Record<string, Hex>>> = {};
      for (const part of (v ?? '').split(',').map((p) => p.trim()).filter(Boolean)) {
        const [, chain, currency, address] = /^([a-z]+)\.([a-z]+)=(.*)$/.exec(part) ?? [];
        if (!chain || !isEvmChain(chain) || !RAILS[chain].currencies.includes(currency) || !isAddress(address)) {
          ctx.addIssue({
            code: 'custom',
            message: `'${part}' is not chain.currency=0xaddress (EIP-55 checksum when mixed case) for a currency the chain carries `
              + `(${EVM_CHAINS.map((c) => `${c}: ${RAILS[c].currencies.join('/')}`).join('; ')})`,
          });
          return z.NEVER;
        }
        (out[chain] ??= {})[currency] = getAddress(address);
      }
      return out;
    }),
  ANVIL_BASE_PORT: port(8545),
  /** Seed of the platform's chain keys: the treasury (index 0) and one deposit address per transfer. */
  CHAIN_TREASURY_MNEMONIC: z
    .string()
    .default(ANVIL_TEST_MNEMONIC)
    // The checksum catches a mistyped word, which would otherwise derive another treasury. Not
    // rewritten (spacing included): the keys derive from the text exactly as given.
    .refine((v) => validateMnemonic(v.trim(), wordlist), {
      message: 'must be a BIP-39 mnemonic (English words separated by single spaces, valid checksum)',
    }),
  /** Blocks on top of a deposit's block before it counts as received (with EVM_DEPOSIT_FINALITY=confirmations). */
  EVM_CONFIRMATIONS: z.coerce.number().int().min(0).max(1000).default(2),
  /**
   * When a deposit counts: `finalized` waits for the node's finalized block (no reorg can undo it),
   * `confirmations` for EVM_CONFIRMATIONS blocks. Unset: finalized on nodes off this machine,
   * confirmations on local ones (anvil finalizes 64 blocks behind).
   */
  EVM_DEPOSIT_FINALITY: z.enum(['finalized', 'confirmations']).optional(),
  /** At most this many blocks per log query when looking for deposits (RPC providers cap the range). */
  EVM_LOG_BLOCK_RANGE: z.coerce.number().int().min(1).max(100_000).default(2_000),
  /**
   * Transfers whose funds do not arrive within this time are canceled (on the real clock). At most 30
   * days: a chain deposit is watched in half-hour periods, and the workflow's history must stay small.
   */
  TRANSFER_DEPOSIT_EXPIRY_HOURS: z.coerce.number().positive().max(720).default(72),
  /** Transfers of at least this many US dollars (or their equivalent) wait for an operator's review. */
  TRANSFER_REVIEW_THRESHOLD_USD: z.coerce.number().positive().default(10_000),
  /** A customer's transfers within 24 hours above this many US dollars are held for review (velocity). */
  TRANSFER_DAILY_LIMIT_USD: z.coerce.number().positive().default(50_000),
  /** Sandbox exchange rates as US dollars per unit: "eur=1.08,gbp=1.27" (defaults in docs/TRANSFERS.md). */
  SANDBOX_FX_RATES: usdRateSheet(),
  /**
   * The live environment's rate sheet, US dollars per unit, kept by the operator's treasury: without
   * it a live quote that needs a market rate (anything but a stablecoin at its peg) answers 503.
   */
  LIVE_FX_RATES: usdRateSheet(),
  /**
   * How long a request that a workflow answers (cancel, review and KYC decisions, micro-deposit
   * amounts, a provider's deposit) waits for it before a 503: the workflow answers only while a
   * worker runs.
   */
  WORKFLOW_ANSWER_TIMEOUT_SECONDS: z.coerce.number().positive().max(300).default(10),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  ...bankFileEnv,
  ...solanaEnv,
  ...bitcoinEnv,
  ...timerEnv,
}).superRefine((c, ctx) => {
  checkBankFileSettings(c, ctx);
  if (c.BITCOIN_MAX_FEE_RATE < c.BITCOIN_MIN_FEE_RATE) {
    ctx.addIssue({ code: 'custom', path: ['BITCOIN_MAX_FEE_RATE'], message: `must be at least BITCOIN_MIN_FEE_RATE (${c.BITCOIN_MIN_FEE_RATE})` });
  }
  // Anyone can derive the keys of anvil's mnemonic: on a chain other than a local node it would hand
  // the treasury to the first taker.
  const remote = [...Object.entries(c.EVM_RPC_URLS), ...(c.SOLANA_RPC_URL ? [['solana', c.SOLANA_RPC_URL]] : []), ...(c.BITCOIN_RPC_URL ? [['bitcoin', c.BITCOIN_RPC_URL]] : [])]
    .filter(([, url]) => !isLoopbackUrl(url!)).map(([chain]) => chain);
  if (remote.length > 0 && c.CHAIN_TREASURY_MNEMONIC === ANVIL_TEST_MNEMONIC) {
    ctx.addIssue({
      code: 'custom', path: ['CHAIN_TREASURY_MNEMONIC'],
      message: `must be the platform's own seed: EVM_RPC_URLS, SOLANA_RPC_URL or BITCOIN_RPC_URL points ${remote.join(', ')} at a node that is not local, and anvil's public test mnemonic would give its treasury away`,
    });
  }
});

/** A node on this machine (127.0.0.0/8, localhost, ::1), as the embedded stack and the tests run them. */
export function isLoopbackUrl(url: string): boolean {
  const host = new URL(url).hostname;
  return host === 'localhost' || host === '[::1]' || /^127\./.test(host);
}

export type Config = z.infer<typeof envSchema> & {
  dataDir: string;
  sanctionsDataDir: string;
  publicBaseUrl: string;
};

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const c = parsed.data;
  return {
    ...c,
    dataDir: path.resolve(c.DATA_DIR),
    sanctionsDataDir: path.resolve(c.SANCTIONS_DATA_DIR || path.join(c.DATA_DIR, 'sanctions')),
    publicBaseUrl: (c.PUBLIC_BASE_URL ?? `http://localhost:${c.PORT}`).replace(/\/$/, ''),
  };
}
