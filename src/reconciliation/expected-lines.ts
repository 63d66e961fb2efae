import type { DataCipher } from '../crypto';
import type { Db } from '../db';
import type { Environment } from '../db/schema';
import { achBatchReference, achBatchTotals, readAchFile, type ReadAchFile } from '../providers/bank-files/nacha';
import { readPain001 } from '../providers/bank-files/sepa-messages';
import type { ExpectedLine } from './matching';
import { parseAmount } from '../domain/money';

// What the platform's books say its account at the bank should show for a period
// (docs/RECONCILIATION.md): each file of ours as the bank books it (a NACHA batch as one line each
// way; a pain.001 payment block as one line, less what the bank rejected), each payment the bank
// returned, and each deposit it credited. Read from the records of the bank files, not rebuilt.

/** YYMMDD as YYYY-MM-DD. */
const isoDate = (yymmdd: string) => `20${yymmdd.slice(0, 2)}-${yymmdd.slice(2, 4)}-${yymmdd.slice(4, 6)}`;
const day = (d: Date) => d.toISOString().slice(0, 10);

/** A NACHA file of ours as the bank books it: each batch one debit (what it paid out) and one credit (what it pulled in). */
export function achFileLines(name: string, file: ReadAchFile): ExpectedLine[] {
  return file.batches.flatMap((batch, i) => {
    const ref = achBatchReference(name, i);
    const { paidOutMinor, pulledInMinor } = achBatchTotals(batch);
    const base = { date: isoDate(batch.header.effectiveEntryDate), references: [ref, name], counterparty: '' };
    return [
      { ...base, id: `file:${name}:B${i + 1}:debit`, direction: 'debit' as const, amountMinor: paidOutMinor },
      { ...base, id: `file:${name}:B${i + 1}:credit`, direction: 'credit' as const, amountMinor: pulledInMinor },
    ].filter((l) => l.amountMinor > 0n);
  });
}

/** The rails whose money is on each bank account: the US account's ACH rails; the SEPA account's. */
export const RAILS_OF_ACCOUNT = { ach: ['ach', 'ach_push', 'ach_same_day'], sepa: ['sepa'] } as const;

/** The expected lines of one rail's account (`ach`: the US account; `sepa`) whose dates fall in [from, to). */
export async function expectedBankLines(db: Db, cipher: DataCipher, q: { rail: 'ach' | 'sepa'; environment: Environment; from: Date; to: Date }): Promise<ExpectedLine[]> {
  const rails = [...RAILS_OF_ACCOUNT[q.rail]];
  const lines: ExpectedLine[] = [];
  const files = await db.selectFrom('bank_files').select(['id', 'name', 'contents_encrypted'])
    .where('direction', '=', 'outbound').where('rail', '=', q.rail).where('status', '=', 'uploaded')
    .where('uploaded_at', '>=', q.from).where('uploaded_at', '<', q.to).orderBy('name').execute();
  for (const f of files) {
    const text = cipher.decryptText(f.contents_encrypted);
    if (q.rail === 'ach') lines.push(...achFileLines(f.name, readAchFile(text)));
    else lines.push(...await sepaFileLines(db, f, text));
  }
  const returned = await db.selectFrom('bank_payments').select(['id', 'amount_minor', 'trace_number', 'entry_ref', 'returned_at', 'direction'])
    .where('status', '=', 'returned').where('environment', '=', q.environment).where('rail', 'in', rails)
    .where('returned_at', '>=', q.from).where('returned_at', '<', q.to).orderBy('id').execute();
  for (const p of returned) {
    lines.push({
      id: `return:${p.id}`, direction: p.direction === 'credit' ? 'credit' : 'debit', amountMinor: BigInt(p.amount_minor), date: day(p.returned_at!),
      references: [p.trace_number, p.entry_ref].filter((r): r is string => Boolean(r)), counterparty: '',
    });
  }
  // The bank-file rail's deposits (`ach:<file>:<entry>`, `sepa:…`): those of the one environment it serves.
  const deposits = await db.selectFrom('rail_events').select(['id', 'payload', 'received_at'])
    .where('type', '=', 'payment.received').where('provider_payment_id', 'like', `${q.rail}:%`)
    .where('received_at', '>=', q.from).where('received_at', '<', q.to).orderBy('id').execute();
  for (const d of deposits) {
    const payload = d.payload as { amount?: string; reference?: string };
    lines.push({
      id: `deposit:${d.id}`, direction: 'credit', amountMinor: parseAmount(payload.amount ?? '', 2) ?? 0n, date: day(d.received_at),
      references: payload.reference ? [payload.reference] : [], counterparty: '',
    });
  }
  return lines;
}

/** A pain.001 of ours as the bank books it: its payment block as one debit, less the transfers the bank rejected. */
async function sepaFileLines(db: Db, file: { id: string; name: string }, text: string): Promise<ExpectedLine[]> {
  const message = readPain001(text);
  const rejected = await db.selectFrom('bank_payments').select('entry_ref').where('file_id', '=', file.id).where('status', '=', 'rejected').execute();
  const refused = new Set(rejected.map((r) => r.entry_ref));
  const booked = message.credits.filter((c) => !refused.has(c.endToEndId));
  if (booked.length === 0) return [];
  return [{
    id: `file:${file.name}:block`, direction: 'debit', amountMinor: booked.reduce((s, c) => s + c.amountMinor, 0n), date: message.credits[0]!.executionDate,
    references: [`${message.messageId}.0`, message.messageId, file.name], counterparty: '',
  }];
}
