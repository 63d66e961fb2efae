import { randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export const ID_PREFIXES = {
  customer: 'cus',
  externalAccount: 'ext',
  wallet: 'wal',
  account: 'acct',
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
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

/** Unbiased random base62 characters (rejection sampling over random bytes). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
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

