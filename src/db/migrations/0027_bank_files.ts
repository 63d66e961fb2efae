import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- Files exchanged with a bank (docs/BANK_FILES.md). An outbound file is recorded, bytes and all,
    -- before its upload, so that a repeat after a crash sends the same bytes under the same name.
    -- Its contents hold account numbers: kept encrypted.
    create table bank_files (
      id text primary key,
      rail text not null,
      direction text not null check (direction in ('outbound', 'inbound')),
      name text not null unique,
      file_id_modifier text,
      sha256 text not null,
      contents_encrypted text not null,
      entry_count integer not null,
      total_debit_minor numeric not null,
      total_credit_minor numeric not null,
      status text not null check (status in ('recorded', 'uploaded', 'processed')),
      created_at timestamptz not null,
      uploaded_at timestamptz
    );
    -- A payment goes out in one file only.
    create table bank_file_payments (
      file_id text not null references bank_files (id),
      payment_id text not null unique,
      primary key (file_id, payment_id)
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table bank_file_payments; drop table bank_files`.execute(db);
}
