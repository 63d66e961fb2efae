import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- Payments on fiat rails as the sandbox rail simulators keep them (a real provider keeps its own).
    create table rail_payments (
      id text primary key,
      developer_id text not null,
      environment text not null,
      rail text not null,
      direction text not null check (direction in ('credit', 'debit')),
      amount_minor bigint not null check (amount_minor > 0),
      currency text not null,
      external_account_id text not null references external_accounts(id),
      purpose text not null,
      idempotency_key text not null unique,
      submitted_at timestamptz not null,
      settles_at timestamptz not null,
      created_at timestamptz not null
    );
    create index rail_payments_account on rail_payments (external_account_id, created_at);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table rail_payments`.execute(db);
}
