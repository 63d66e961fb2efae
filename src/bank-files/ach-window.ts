import { sql, type Transaction } from 'kysely';
import type { DataCipher } from '../crypto';
import type { Db } from '../db';
import type { Database, Environment } from '../db/schema';
import type { BankFileRail } from '../config-bank-files';
import { RAILS, realSettlementTime, type FiatRailProfile } from '../domain/rails';
import { buildAchFile, type AchEntry, type AchOriginator } from '../providers/bank-files/nacha';
import { insertOutboundFile } from './outbound-files';

// An ACH file window (docs/BANK_FILES.md): the payments queued for it go into one NACHA file,
// recorded with them in one transaction before anything is uploaded.

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

export interface FiledWindow {
  fileId: string;
  name: string;
  entryCount: number;
}

/** The code a payment gets when it cannot go in a file: no US account number to pay (R03, "no account"). */
export const UNFILEABLE_CODE = 'R03';
/** File id modifiers in the order NACHA uses them: one file per modifier per day. */
const MODIFIERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
/** At most this many entries in one file; the rest wait for the next window. */
export const MAX_FILE_ENTRIES = 10_000;
const DESCRIPTIONS: Record<string, string> = {
  micro_deposit: 'ACCTVERIFY', micro_deposit_recovery: 'ACCTVERIFY', payout: 'PAYOUT', refund: 'REFUND',
};

/**
 * Files the window's queued payments: one NACHA file, recorded with its payments (now `filed`, with
 * their effective date and settlement time) in one transaction. The same window again (its workflow
 * retried after the commit) answers the file it recorded; an empty window records nothing.
 */
export async function fileAchWindow(
  db: Db, cipher: DataCipher, settings: AchWindowSettings, window: { id: string; kind: AchWindow }, now = new Date(),
): Promise<FiledWindow | null> {
  return db.transaction().execute(async (trx) => {
    const done = await trx.selectFrom('bank_files').select(['id', 'name', 'entry_count']).where('window_id', '=', window.id).executeTakeFirst();
    if (done) return { fileId: done.id, name: done.name, entryCount: done.entry_count };
    // One window at a time picks payments and a file id modifier.
    await sql`select pg_advisory_xact_lock(hashtext('bank-files:ach'))`.execute(trx);
    const rails = ACH_WINDOWS[window.kind].filter((r) => settings.rails.includes(r));
    if (rails.length === 0) return null;
    const queued = await queuedPayments(trx, settings.environment, rails);
    const fileable = queued.filter((p) => p.routing_number && p.number_encrypted && p.type === 'us_bank_account' && p.purpose !== 'deposit_return');
    const unfileable = queued.filter((p) => !fileable.includes(p));
    if (unfileable.length > 0) {
      await trx.updateTable('bank_payments').set({ status: 'rejected', code: UNFILEABLE_CODE })
        .where('id', 'in', unfileable.map((p) => p.id)).execute();
    }
    if (fileable.length === 0) return null;

    const settlement = realSettlementTime(RAILS[rails[0]] as FiatRailProfile, now);
    const effectiveDate = settlement.toISOString().slice(0, 10);
    const settlesAt = settings.settlementSeconds === undefined ? settlement : new Date(now.getTime() + settings.settlementSeconds * 1000);
    const modifier = await nextFileIdModifier(trx, now);
    const day = now.toISOString().slice(0, 10).replaceAll('-', '');
    const name = `ACH-${day}-${modifier}.ach`;
    const entries: AchEntry[] = fileable.map((p) => ({
      idNumber: p.entry_ref,
      traceNumber: `${settings.originator.odfiRouting.slice(0, 8)}${p.entry_ref.slice(-7)}`,
      direction: p.direction,
      accountType: p.account_type === 'savings' ? 'savings' : 'checking',
      routingNumber: p.routing_number!,
      accountNumber: cipher.decryptText(p.number_encrypted!),
      amountMinor: BigInt(p.amount_minor),
      name: receiverName(p),
      secCode: p.customer_type === 'business' ? 'CCD' : 'PPD',
      effectiveDate,
      entryDescription: DESCRIPTIONS[p.purpose] ?? 'PAYMENT',
    }));
    const built = await buildAchFile({ ...settings.originator, entryDescription: 'PAYMENT' }, entries, { createdAt: now, fileIdModifier: modifier });
    const ids = fileable.map((p) => p.id);
    const file = await insertOutboundFile(trx, cipher, {
      rail: 'ach', name, fileIdModifier: modifier, text: built.text, totals: built.totals, paymentIds: ids, windowId: window.id,
    }, now);
    await trx.updateTable('bank_payments').set({ status: 'filed', file_id: file.id, effective_date: effectiveDate, settles_at: settlesAt })
      .where('id', 'in', ids).execute();
    return { fileId: file.id, name, entryCount: ids.length };
  });
}

/** The window's queued payments, oldest first, with what the file needs of their accounts. */
function queuedPayments(trx: Transaction<Database>, environment: Environment, rails: readonly string[]) {
  return trx.selectFrom('bank_payments as p')
    .leftJoin('external_accounts as a', 'a.id', 'p.external_account_id')
    .leftJoin('customers as c', 'c.id', 'a.customer_id')
    .select([
      'p.id', 'p.entry_ref', 'p.direction', 'p.amount_minor', 'p.purpose', 'a.type', 'a.routing_number', 'a.number_encrypted',
      'a.account_type', 'a.account_name', 'c.type as customer_type', 'c.first_name', 'c.last_name', 'c.business_name',
    ])
    .where('p.status', '=', 'queued').where('p.environment', '=', environment).where('p.rail', 'in', rails)
    .orderBy('p.created_at').orderBy('p.id').limit(MAX_FILE_ENTRIES)
    .forUpdate('p').skipLocked()
    .execute();
}

function receiverName(p: { account_name: string | null; business_name: string | null; first_name: string | null; last_name: string | null }): string {
  const name = p.account_name ?? p.business_name ?? [p.first_name, p.last_name].filter(Boolean).join(' ');
  return (name || 'ACCOUNT HOLDER').toUpperCase().slice(0, 22);
}

/** The next unused modifier among today's (UTC) outbound ACH files. */
async function nextFileIdModifier(trx: Transaction<Database>, now: Date): Promise<string> {
  const day = now.toISOString().slice(0, 10).replaceAll('-', '');
  const { n } = await trx.selectFrom('bank_files').select((eb) => eb.fn.countAll<string>().as('n'))
    .where('direction', '=', 'outbound').where('name', 'like', `ACH-${day}-%`).executeTakeFirstOrThrow();
  const modifier = MODIFIERS[Number(n)];
  if (!modifier) throw new Error(`${MODIFIERS.length} ACH files went out on ${day} already: NACHA allows no more in a day`);
  return modifier;
}
