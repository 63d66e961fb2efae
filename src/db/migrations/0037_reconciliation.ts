import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- The reconciliation of one account's statement (docs/RECONCILIATION.md): once per statement
    -- file and account, so the same statement delivered again changes nothing.
    create table reconciliation_runs (
      id text primary key,
      statement_file_id text not null references bank_files (id),
      account text not null,
      rail text not null,
      period_from timestamptz not null,
      period_to timestamptz not null,
      statement_closing_minor numeric,
      matched integer not null,
      exceptions_opened integer not null,
      created_at timestamptz not null,
      unique (statement_file_id, account)
    );
    -- A statement line and what the books expected, each matched at most once.
    create table reconciliation_matches (
      statement_line_id text primary key,
      expected_id text not null unique,
      run_id text not null references reconciliation_runs (id),
      matched_by text not null,
      difference_minor numeric not null,
      created_at timestamptz not null
    );
    -- What stayed unmatched or differs beyond tolerance, for an operator; key: the line it is about,
    -- so no run opens the same exception twice.
    create table reconciliation_exceptions (
      id text primary key,
      run_id text not null references reconciliation_runs (id),
      type text not null,
      key text not null unique,
      account text not null,
      amount_minor numeric not null,
      statement_line jsonb,
      expected_line jsonb,
      status text not null default 'open',
      resolution text,
      reason text,
      resolved_by text,
      resolved_at timestamptz,
      created_at timestamptz not null
    );
    create index reconciliation_exceptions_open on reconciliation_exceptions (created_at) where status = 'open';
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table reconciliation_exceptions; drop table reconciliation_matches; drop table reconciliation_runs`.execute(db);
}
