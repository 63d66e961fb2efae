import type { Client } from '@temporalio/client';
import type { Db } from '../db';
import { formatAmount } from '../domain/money';
import type { bankFileUploadWorkflow } from '../../workflows/bank-file-upload';

// Operators' view of the files exchanged with the bank (`npm run cli -- bank-files …`,
// docs/BANK_FILES.md): what went out per window and what came back, and a resend.

/** The latest files, newest first: one line each. */
export async function listBankFiles(db: Db, opts: { limit?: number } = {}): Promise<string[]> {
  const rows = await db.selectFrom('bank_files')
    .select(['id', 'direction', 'name', 'status', 'entry_count', 'total_debit_minor', 'total_credit_minor', 'window_id', 'detail', 'created_at', 'uploaded_at'])
    .orderBy('created_at', 'desc').limit(opts.limit ?? 50).execute();
  return rows.map((f) => [
    f.id, f.created_at.toISOString(), f.direction === 'outbound' ? 'out' : 'in ', f.name, f.status, `${f.entry_count} entries`,
    `debit ${formatAmount(BigInt(f.total_debit_minor), 2)} credit ${formatAmount(BigInt(f.total_credit_minor), 2)}`,
    f.direction === 'outbound' ? `window ${f.window_id ?? '-'}` : (f.detail ?? ''),
  ].join('  '));
}

/** One file: its record and, for a file we sent, each payment in it with what became of it. */
export async function showBankFile(db: Db, id: string): Promise<string[]> {
  const f = await db.selectFrom('bank_files').selectAll().where('id', '=', id).executeTakeFirst();
  if (!f) throw new Error(`No bank file ${id}`);
  const lines = [
    `${f.id}  ${f.direction}  ${f.name}  ${f.status}`,
    `  created ${f.created_at.toISOString()}${f.uploaded_at ? `, uploaded ${f.uploaded_at.toISOString()}` : ''}; sha256 ${f.sha256}`,
    `  ${f.entry_count} entries; debit ${formatAmount(BigInt(f.total_debit_minor), 2)}, credit ${formatAmount(BigInt(f.total_credit_minor), 2)}`,
    ...(f.window_id ? [`  window ${f.window_id} (its workflow in the Temporal UI)`] : []),
    ...(f.detail ? [`  ${f.detail}`] : []),
  ];
  const payments = await db.selectFrom('bank_payments')
    .select(['id', 'entry_ref', 'purpose', 'direction', 'amount_minor', 'status', 'code', 'reference', 'effective_date'])
    .where('file_id', '=', id).orderBy('entry_ref').execute();
  for (const p of payments) {
    lines.push(`  ${p.id}  entry ${p.entry_ref}  ${p.purpose} ${p.direction} ${formatAmount(BigInt(p.amount_minor), 2)}  ${p.status}${p.code ? ` ${p.code}` : ''}  effective ${p.effective_date}  ${p.reference ?? ''}`);
  }
  return lines;
}

/**
 * Uploads a file we sent again, for a bank that lost it: the same bytes under the same name. A
 * file still in the bank's inbox is left as it is (the upload finds it there).
 */
export async function resendBankFile(deps: { db: Db; temporal: Client; taskQueue: string }, id: string): Promise<string> {
  const f = await deps.db.updateTable('bank_files').set({ status: 'recorded' })
    .where('id', '=', id).where('direction', '=', 'outbound').where('status', 'in', ['recorded', 'uploaded', 'rejected'])
    .returning(['id', 'name']).executeTakeFirst();
  if (!f) throw new Error(`${id} is not a file we sent`);
  const workflowId = `bank-file-resend:${f.id}:${Date.now()}`;
  await deps.temporal.workflow.start<typeof bankFileUploadWorkflow>('bankFileUploadWorkflow', {
    workflowId, taskQueue: deps.taskQueue, args: [{ fileId: f.id }], staticSummary: `Resend ${f.name} to the bank`,
  });
  return workflowId;
}
