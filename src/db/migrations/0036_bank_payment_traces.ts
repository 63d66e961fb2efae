import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- An ACH entry's trace number, given when its window files it (docs/BANK_FILES.md): the ODFI's 8
    -- digits and a counter of 7, ascending within each batch as NACHA requires, so a return or a
    -- notification of change names the payment by it. reason: why a payment was set aside
    -- instead of filed (the field and what is wrong with it), beside its code.
    alter table bank_payments add column trace_number text;
    alter table bank_payments add column reason text;
    create index bank_payments_trace_number on bank_payments (trace_number) where trace_number is not null;
    create table ach_trace_counters (
      odfi text primary key,
      next_trace integer not null
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table ach_trace_counters; alter table bank_payments drop column trace_number, drop column reason`.execute(db);
}
