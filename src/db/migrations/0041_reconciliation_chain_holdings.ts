import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- A holdings run compares a chain treasury's holdings of one currency with the books
    -- (docs/RECONCILIATION.md, "The chain treasuries"), once per daily run, at a block it records.
    alter table reconciliation_runs drop constraint reconciliation_runs_kind_check;
    alter table reconciliation_runs add constraint reconciliation_runs_kind_check check (kind in ('statement', 'chain', 'holdings'));
    create unique index reconciliation_runs_holdings_once on reconciliation_runs (day_run_key, account) where kind = 'holdings';
    alter table reconciliation_runs add column chain_position text;
    -- A native holdings run: all the treasury's own transactions have cost it up to its block.
    alter table reconciliation_runs add column spent_minor numeric;
    -- What each of the treasury's own transactions cost it in the chain's native asset (gas, and the
    -- gas sent to deposit addresses), counted once, by the native holdings run that found it landed.
    create table reconciliation_chain_costs (
      chain text not null,
      tx_hash text not null,
      cost_minor numeric not null,
      run_id text not null references reconciliation_runs (id),
      created_at timestamptz not null,
      primary key (chain, tx_hash)
    );
    -- The treasury's transactions in flight (looked at by every run until they land), and those made final since the last run.
    create index payments_chain_in_flight on payments (rail) where tx_hash is not null and status in ('pending', 'submitted');
    create index payments_chain_changed on payments (rail, updated_at) where tx_hash is not null;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop index payments_chain_in_flight;
    drop index payments_chain_changed;
    drop table reconciliation_chain_costs;
    alter table reconciliation_runs drop column chain_position, drop column spent_minor;
    drop index reconciliation_runs_holdings_once;
    delete from reconciliation_runs where kind = 'holdings';
    alter table reconciliation_runs drop constraint reconciliation_runs_kind_check;
    alter table reconciliation_runs add constraint reconciliation_runs_kind_check check (kind in ('statement', 'chain'));
  `.execute(db);
}
