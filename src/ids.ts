import { randomBytes, randomFillSync } from 'node:crypto';
import { z } from 'zod';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export const ID_PREFIXES = {
  customer: 'cus',
  externalAccount: 'ext',
  wallet: 'wal',
  walletTransaction: 'wtx',
  account: 'acct',
  mpcSession: 'mpcs',
  transfer: 'tr',
  payment: 'pay',
  screening: 'scr',
  screeningBatch: 'sbat',
  event: 'evt',
  webhook: 'whk',
  apiKey: 'key',
  developer: 'dev',
  request: 'req',
  kycSubmission: 'kycs',
  ledgerAccount: 'lacct',
  ledgerTransaction: 'ltx',
  bankFile: 'bfile',
  bankPayment: 'bpay',
  liquidationAddress: 'liq',
  virtualAccount: 'va',
  routeDeposit: 'drn',
  virtualAccountDeposit: 'vad',
  reconciliationRun: 'rrun',
  reconciliationException: 'rexc',
  reconciliationResolution: 'rres',
  reconciliationDay: 'rday',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

// Random bytes for ids drawn from the CSPRNG 4 KiB at a time (as crypto.randomUUID does): one call
// into OpenSSL per ~180 ids instead of one per id. Each byte is used once. Secrets (API keys,
// tokens) do not come from this pool, so that no future secret sits in memory before it exists.
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

function nextRandomByte(): number {
  if (poolOffset === pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  return pool[poolOffset++]!;
}

/** Unbiased base62 characters: rejection sampling keeps bytes 0–247 (4 × 62). */
function base62(length: number, nextByte: () => number): string {
  let out = '';
  while (out.length < length) {
    const byte = nextByte();
    if (byte < 248) out += BASE62[byte % 62];
  }
  return out;
}

/** Random base62 characters for ids and references. */
export function randomBase62(length: number): string {
  return base62(length, nextRandomByte);
}

/** The same for secrets (API keys, link tokens): fresh bytes from the CSPRNG for each one, drawn at once. */
export function secretBase62(length: number): string {
  // 248 of 256 bytes are kept: twice the length is nearly always enough; more is drawn if not.
  let bytes = randomBytes(length * 2);
  let i = 0;
  const secret = base62(length, () => {
    if (i === bytes.length) {
      bytes.fill(0);
      bytes = randomBytes(length);
      i = 0;
    }
    return bytes[i++]!;
  });
  bytes.fill(0);
  return secret;
}

function timePrefix(ms: number): string {
  // 8 base62 characters cover timestamps until the year 8000; fixed width keeps ids sortable.
  let n = ms;
  let s = '';
  for (let i = 0; i < 8; i++) {
    s = BASE62[n % 62] + s;
    n = Math.floor(n / 62);
  }
  return s;
}

/** `cus_` + 8 time characters + 22 random base62 characters: unguessable and time-sortable. */
export function newId(kind: IdKind, now = Date.now()): string {
  return `${ID_PREFIXES[kind]}_${timePrefix(now)}${randomBase62(22)}`;
}

/** An object id in representations: its prefix and the base62 body (plain pattern, valid in any JSON Schema tool). */
export const objectId = (prefix: string) => z.string().regex(new RegExp(`^${prefix}_[0-9A-Za-z]+$`));
