import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- Payments the bank-file rail holds (docs/BANK_FILES.md): queued for the next file window of
    -- their rail, then in exactly one file; settled on the effective date unless the bank rejects
    -- or returns them. entry_ref is the entry's individual id number: how a return names it.
    create sequence bank_entry_ref_seq;
    create table bank_payments (
      id text primary key,
      developer_id text not null,
      environment text not null,
      rail text not null,
      direction text not null check (direction in ('credit', 'debit')),
      amount_minor numeric not null,
      currency text not null,
      external_account_id text,
      purpose text not null,
      idempotency_key text not null unique,
      reference text,
      entry_ref text not null unique default lpad(nextval('bank_entry_ref_seq')::text, 15, '0'),
      status text not null check (status in ('queued', 'filed', 'rejected', 'returned')),
      code text,
      file_id text references bank_files (id),
      effective_date text,
      settles_at timestamptz,
      created_at timestamptz not null,
      returned_at timestamptz
    );
    create index bank_payments_queued on bank_payments (rail, created_at) where status = 'queued';
    -- A window files once: its workflow's retry finds the file it recorded.
    alter table bank_files add column window_id text unique;
    alter table bank_files add column detail text;
    alter table bank_files drop constraint bank_files_name_key;
    alter table bank_files add constraint bank_files_direction_name_key unique (direction, name);
    alter table bank_files drop constraint bank_files_status_check;
    alter table bank_files add constraint bank_files_status_check check (status in ('recorded', 'uploaded', 'processed', 'rejected'));
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop table bank_payments;
    drop sequence bank_entry_ref_seq;
    alter table bank_files drop column window_id;
    alter table bank_files drop column detail;
    alter table bank_files drop constraint bank_files_direction_name_key;
    alter table bank_files add constraint bank_files_name_key unique (name);
  `.execute(db);
}
