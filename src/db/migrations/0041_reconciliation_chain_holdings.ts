import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- A holdings run compares a chain treasury's holdings of one currency with the books
    -- (docs/RECONCILIATION.md, "The chain treasuries"), once per daily run, at a block it records.
    alter table reconciliation_runs drop constraint reconciliation_runs_kind_check;
    alter table reconciliation_runs add constraint reconciliation_runs_kind_check check (kind in ('statement', 'chain', 'holdings'));
    create unique index reconciliation_runs_holdings_once on reconciliation_runs (day_run_key, account) where kind = 'holdings';
    alter table reconciliation_runs add column chain_position text;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table reconciliation_runs drop column chain_position;
    drop index reconciliation_runs_holdings_once;
    delete from reconciliation_runs where kind = 'holdings';
    alter table reconciliation_runs drop constraint reconciliation_runs_kind_check;
    alter table reconciliation_runs add constraint reconciliation_runs_kind_check check (kind in ('statement', 'chain'));
  `.execute(db);
}
