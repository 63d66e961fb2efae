import type { DataCipher } from '../crypto';
import type { Db } from '../db';
import type { Environment } from '../db/schema';
import type { BankFileRail } from '../config-bank-files';
import { RAILS, type FiatRailProfile } from '../domain/rails';
import type { Transaction } from 'kysely';
import type { Database } from '../db/schema';
import { abaRoutingError } from '../domain/bank-validation';
import { formatAmount } from '../domain/money';
import { achBatchKey, buildAchFile, MAX_ACH_ENTRY_MINOR, type AchEntry, type AchOriginator } from '../providers/bank-files/nacha';
import { achText } from '../providers/bank-files/rail-text';
import { fileWindow, openedOncePerWindow, receiverName, type FiledWindow, type QueuedPayment, type SetAside, type WindowFormat } from './file-window';

// An ACH file window (docs/BANK_FILES.md): the payments queued for it in one NACHA file.

/** Standard ACH settles the next business day; same-day ACH the same day. */
export const ACH_WINDOWS = { ach_standard: ['ach', 'ach_push'], ach_same_day: ['ach_same_day'] } as const satisfies Record<string, readonly BankFileRail[]>;
export type AchWindow = keyof typeof ACH_WINDOWS;

export interface AchWindowSettings {
  originator: Omit<AchOriginator, 'entryDescription'>;
  /** The environment whose payments go to this bank, and its rails that run on files. */
  environment: Environment;
  rails: readonly BankFileRail[];
  /** Settle this long after the window instead of on the effective date (tests, demonstrations). */
  settlementSeconds?: number;
}

/** File id modifiers in the order NACHA uses them: one file per modifier per day. */
const MODIFIERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const DESCRIPTIONS: Record<string, string> = {
  micro_deposit: 'ACCTVERIFY', micro_deposit_recovery: 'ACCTVERIFY', payout: 'PAYOUT', refund: 'REFUND',
};

function achFormat(settings: AchWindowSettings, cipher: DataCipher, kind: AchWindow): WindowFormat {
  const rails = ACH_WINDOWS[kind].filter((r) => settings.rails.includes(r));
  const odfi8 = settings.originator.odfiRouting.slice(0, 8);
  const decrypt = openedOncePerWindow(cipher);
  const entryOf = (p: QueuedPayment, effectiveDate = '') => achEntryOf(p, decrypt, effectiveDate);
  return {
    fileRail: 'ach',
    namePrefix: 'ACH',
    rails,
    settlement: RAILS[ACH_WINDOWS[kind][0]] as FiatRailProfile,
    refusal: (p) => achRefusal(p, decrypt),
    // By batch (the order the file's batches go out in), then as queued: traces ascend in each batch.
    arrange: async (trx, payments) => {
      const ordered = payments.map((p, i) => ({ p, i, key: achBatchKey(entryOf(p)) }))
        .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.i - b.i)).map((x) => x.p);
      return { payments: ordered, traces: await takeTraceNumbers(trx, odfi8, ordered.length) };
    },
    name: ({ day, sequence }) => {
      const modifier = MODIFIERS[sequence];
      if (!modifier) throw new Error(`${MODIFIERS.length} ACH files went out on ${day} already: NACHA allows no more in a day`);
      return { name: `ACH-${day}-${modifier}.ach`, fileIdModifier: modifier };
    },
    build: async (payments, { now, effectiveDate, fileIdModifier, traces }) => {
      if (!fileIdModifier || !traces) throw new Error('an ACH file is built with the file id modifier of its name and its trace numbers');
      const entries = payments.map((p, i) => ({ ...entryOf(p, effectiveDate), traceNumber: traces[i] }));
      const built = await buildAchFile({ ...settings.originator, entryDescription: 'PAYMENT' }, entries, { createdAt: now, fileIdModifier });
      return { text: built.text, totals: built.totals };
    },
  };
}

/** The NACHA entry of a queued payment (its trace number given when filed); `decrypt` opens its account number. */
export function achEntryOf(p: QueuedPayment, decrypt: (sealed: string) => string, effectiveDate = ''): AchEntry {
  return {
    idNumber: p.entry_ref,
    direction: p.direction,
    accountType: p.account_type === 'savings' ? 'savings' : 'checking',
    routingNumber: p.routing_number ?? '',
    accountNumber: p.number_encrypted ? decrypt(p.number_encrypted) : '',
    amountMinor: BigInt(p.amount_minor),
    // In NACHA's character set: transliterated, upper case (the original stays on the account).
    name: achText(receiverName(p), 22) || 'ACCOUNT HOLDER',
    secCode: p.customer_type === 'business' ? 'CCD' : 'PPD',
    effectiveDate,
    entryDescription: DESCRIPTIONS[p.purpose] ?? 'PAYMENT',
  };
}

/**
 * Why a queued payment cannot be an ACH entry, named by the field: no US account (R03), a routing
 * number that fails its check digit (R28), an account number NACHA cannot carry (R04), an amount
 * outside the ACH rail's bounds (R03 would not say why: its field is named).
 */
export function achRefusal(p: QueuedPayment, decrypt: (sealed: string) => string): SetAside | null {
  if (p.purpose === 'deposit_return') return { code: 'R03', reason: 'external_account_id: a deposit return has no account an ACH file can pay' };
  if (p.type !== 'us_bank_account' || !p.routing_number || !p.number_encrypted) return { code: 'R03', reason: 'external_account_id: no US bank account an ACH file can pay' };
  const routing = abaRoutingError(p.routing_number);
  if (routing) return { code: 'R28', reason: `routing_number ${routing}` };
  if (!/^[A-Za-z0-9-]{1,17}$/.test(decrypt(p.number_encrypted))) return { code: 'R04', reason: 'account_number must be 1 to 17 letters, digits or hyphens to go in a NACHA entry' };
  const amount = BigInt(p.amount_minor);
  if (amount <= 0n || amount > MAX_ACH_ENTRY_MINOR) return { code: 'R03', reason: `amount ${formatAmount(amount, 2)} is not an ACH entry amount (0.01 to 9,999,999.99)` };
  return null;
}

/**
 * `count` trace numbers of the ODFI, ascending: its 8 digits and a 7-digit counter kept in
 * `ach_trace_counters` (under the window's lock). The counter starts again from 1 rather than wrap
 * inside a file; a trace repeats only after 9,999,999 entries.
 */
async function takeTraceNumbers(trx: Transaction<Database>, odfi8: string, count: number): Promise<string[]> {
  await trx.insertInto('ach_trace_counters').values({ odfi: odfi8, next_trace: 1 }).onConflict((oc) => oc.column('odfi').doNothing()).execute();
  const { next_trace: next } = await trx.selectFrom('ach_trace_counters').select('next_trace').where('odfi', '=', odfi8).forUpdate().executeTakeFirstOrThrow();
  const start = next + count - 1 > 9_999_999 ? 1 : next;
  await trx.updateTable('ach_trace_counters').set({ next_trace: start + count }).where('odfi', '=', odfi8).execute();
  return Array.from({ length: count }, (_, i) => `${odfi8}${String(start + i).padStart(7, '0')}`);
}

/** Files the window's queued ACH payments in one NACHA file (fileWindow: recorded with them, once per window). */
export function fileAchWindow(
  db: Db, cipher: DataCipher, settings: AchWindowSettings, window: { id: string; kind: AchWindow }, now = new Date(),
): Promise<FiledWindow | null> {
  return fileWindow(db, cipher, settings, window, achFormat(settings, cipher, window.kind), now);
}
