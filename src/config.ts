import path from 'node:path';
import { z } from 'zod';

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

const port = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback);

const envSchema = z.object({
  PORT: port(3000),
  HOST: z.string().default('127.0.0.1'),
  DATA_DIR: z.string().default('.data'),
  DATABASE_URL: optionalUrl(['postgres://', 'postgresql://']),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(20),
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
  REDIS_URL: optionalUrl(['redis://', 'rediss://']),
  PUBLIC_BASE_URL: optionalUrl(['http://', 'https://']),
  /** Sandbox clock speed-up: 60 makes a sandbox minute pass in one second. */
  SANDBOX_TIME_SCALE: z.coerce.number().min(1).max(1_000_000).default(1),
  /** 32 bytes, base64. Encrypts tax ids, documents and account numbers at rest. */
  DATA_ENCRYPTION_KEY: z
    .string()
    .optional()
    .refine((v) => v === undefined || v === '' || Buffer.from(v, 'base64').length === 32, {
      message: 'must be 32 bytes encoded in base64 (openssl rand -base64 32)',
    }),
  /** How long a customer has to confirm micro-deposit amounts (14 days; on the sandbox clock in the sandbox). */
  MICRO_DEPOSIT_EXPIRY_HOURS: z.coerce.number().positive().default(24 * 14),
  KYC_LINK_TTL_HOURS: z.coerce.number().positive().default(24 * 30),
  IDEMPOTENCY_RETENTION_HOURS: z.coerce.number().positive().default(24),
  /** An idempotency key left "in progress" by a crashed process may be taken over after this long. */
  IDEMPOTENCY_LOCK_SECONDS: z.coerce.number().positive().default(60),
  /** Where the sanctions list files are (as `lists sync` writes them); default DATA_DIR/sanctions. */
  SANCTIONS_DATA_DIR: z.string().optional(),
  /** Score from which a screening reports a potential match (docs/SANCTIONS.md explains the scale). */
  SANCTIONS_MATCH_THRESHOLD: z.coerce.number().min(0.5).max(1).default(0.8),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

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
