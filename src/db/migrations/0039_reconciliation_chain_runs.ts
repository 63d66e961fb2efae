import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- A run checks a statement of a bank account, or a chain's payouts against its node (no statement
    -- file then): kind says which; a chain run is recorded once per daily run (day_run_key) and chain.
    alter table reconciliation_runs alter column statement_file_id drop not null;
    alter table reconciliation_runs add column kind text not null default 'statement' check (kind in ('statement', 'chain'));
    alter table reconciliation_runs add column day_run_key text;
    create unique index reconciliation_runs_chain_once on reconciliation_runs (day_run_key, account) where kind = 'chain';
    -- A chain exception's currency (a bank account's is its rail's).
    alter table reconciliation_exceptions add column currency text;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table reconciliation_exceptions drop column currency;
    drop index reconciliation_runs_chain_once;
    alter table reconciliation_runs drop column day_run_key, drop column kind;
  `.execute(db);
}
