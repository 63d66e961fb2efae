import { sql, type Selectable } from 'kysely';
import type { Db } from '../../db';
import type { BankPaymentsTable } from '../../db/schema';
import { newId } from '../../ids';
import { RAILS, realSettlementTime, type FiatRailProfile } from '../../domain/rails';
import { RailWebhookRejected, type RailAdapter, type RailPayment, type RailPaymentRequest } from '../rails';

// The fiat rails that run through the bank's files (docs/BANK_FILES.md): a payment is queued here,
// goes out in the next file window of its rail, and settles on its effective date unless the bank
// rejects the file or returns the entry (the outbox, read on a schedule, says which).

export interface BankFileRailOptions {
  /** Settle this long after the file's upload instead of on the effective date (tests, demonstrations). */
  settlementSeconds?: number;
  /** How long the workflow waits before it asks again about a payment whose file has not gone out yet. */
  recheckMs: number;
}

export class BankFileRails implements RailAdapter {
  constructor(private readonly db: Db, private readonly opts: BankFileRailOptions) {}

  /** Queued once per idempotency key; the same key answers the first payment. */
  async submitPayment(r: RailPaymentRequest): Promise<RailPayment> {
    const now = new Date();
    const inserted = await sql<Selectable<BankPaymentsTable>>`
      insert into bank_payments (id, developer_id, environment, rail, direction, amount_minor, currency, external_account_id,
                                 purpose, idempotency_key, reference, status, created_at)
      values (${newId('bankPayment', now.getTime())}, ${r.tenant.developerId}, ${r.tenant.environment}, ${r.rail}, ${r.direction},
              ${r.amountMinor.toString()}, ${r.currency}, ${r.externalAccountId ?? null}, ${r.purpose}, ${r.idempotencyKey},
              ${r.reference ?? null}, 'queued', ${now})
      on conflict (idempotency_key) do nothing
      returning *`.execute(this.db);
    const row = inserted.rows[0] ? { ...inserted.rows[0], file_status: null } : await this.withFileStatus().where('p.idempotency_key', '=', r.idempotencyKey).executeTakeFirstOrThrow();
    return this.toPayment(row);
  }

  async getPayment(id: string): Promise<RailPayment> {
    return this.toPayment(await this.withFileStatus().where('p.id', '=', id).executeTakeFirstOrThrow());
  }

  /** A payment with its file's status, in one query. */
  private withFileStatus() {
    return this.db.selectFrom('bank_payments as p').leftJoin('bank_files as f', 'f.id', 'p.file_id').selectAll('p').select('f.status as file_status');
  }

  parseWebhook(): never {
    throw new RailWebhookRejected('The bank-file rail has no webhook: the bank answers through its outbox', 'signature');
  }

  /**
   * Pending until its file is uploaded and its settlement time has come; rejected or returned as the
   * bank's outbox said. While queued, `settlesAt` is the rail's next settlement on the real clock (or
   * a recheck soon, when the settlement is given in seconds), so a workflow sleeps until then.
   */
  private toPayment(row: Selectable<BankPaymentsTable> & { file_status: string | null }): RailPayment {
    const now = Date.now();
    const uploaded = row.file_status === 'uploaded';
    const base = { id: row.id, amountMinor: BigInt(row.amount_minor), direction: row.direction, code: row.code ?? undefined };
    if (row.status === 'rejected' || row.status === 'returned') {
      return { ...base, status: row.status, settlesAt: row.settles_at ?? new Date(now) };
    }
    const due = row.settles_at?.getTime();
    if (uploaded && due !== undefined && due <= now) return { ...base, status: 'settled', settlesAt: row.settles_at! };
    const estimate = due ?? (this.opts.settlementSeconds === undefined
      ? realSettlementTime(RAILS[row.rail as keyof typeof RAILS] as FiatRailProfile, new Date(now)).getTime()
      : now + this.opts.recheckMs);
    return { ...base, status: 'pending', settlesAt: new Date(Math.max(estimate, now + this.opts.recheckMs)) };
  }
}
