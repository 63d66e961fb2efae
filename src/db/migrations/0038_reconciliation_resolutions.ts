import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- The platform's operators (docs/RECONCILIATION.md, "Operators"): a developer account whose
    -- secret keys also reach the operator routes (/v0/reconciliation/…), in their environment.
    alter table developers add column operator boolean not null default false;
    -- A reconciliation belongs to the environment whose bank account it proves.
    alter table reconciliation_runs add column environment text not null default 'production';
    alter table reconciliation_exceptions add column environment text not null default 'production', add column rail text;
    update reconciliation_exceptions e set rail = r.rail from reconciliation_runs r where r.id = e.run_id;
    alter table reconciliation_exceptions alter column rail set not null;
    -- When it last changed (opened, under investigation, resolved).
    alter table reconciliation_exceptions add column updated_at timestamptz;
    update reconciliation_exceptions set updated_at = coalesce(resolved_at, created_at);
    alter table reconciliation_exceptions alter column updated_at set not null;
    alter table reconciliation_exceptions drop constraint if exists reconciliation_exceptions_status_check;
    alter table reconciliation_exceptions add constraint reconciliation_exceptions_status_check check (status in ('open', 'investigating', 'resolved'));
    create index reconciliation_exceptions_listed on reconciliation_exceptions (environment, created_at, id);
    -- What an operator did about an exception, one row per action, never changed: who, when, what,
    -- why, and the ledger movement a write-off posted.
    create table reconciliation_resolutions (
      id text primary key,
      exception_id text not null references reconciliation_exceptions (id),
      action text not null check (action in ('match', 'write_off', 'investigate')),
      operator text not null,
      reason text not null,
      counterpart_exception_id text references reconciliation_exceptions (id),
      ledger_transaction_id text,
      request_id text,
      created_at timestamptz not null
    );
    create index reconciliation_resolutions_exception on reconciliation_resolutions (exception_id, created_at);
    create function reconciliation_resolutions_append_only() returns trigger language plpgsql as $$
      begin raise exception 'reconciliation_resolutions is append-only'; end $$;
    create trigger reconciliation_resolutions_append_only before update or delete on reconciliation_resolutions
      for each statement execute function reconciliation_resolutions_append_only();
    -- The daily run's report (src/reconciliation/daily.ts): once per run key (the scheduled workflow's id).
    create table reconciliation_days (
      id text primary key,
      run_key text not null unique,
      environment text not null,
      created_at timestamptz not null,
      report jsonb not null,
      breaks integer not null
    );
    create index reconciliation_days_listed on reconciliation_days (environment, created_at, id);
    -- Where a written-off difference waits: the platform's suspense account per rail and currency.
    alter table ledger_accounts drop constraint ledger_accounts_purpose_check;
    alter table ledger_accounts add constraint ledger_accounts_purpose_check
      check (purpose in ('customer_funds', 'rail_clearing', 'chain_treasury', 'platform_fees', 'developer_fees', 'fx_conversion',
                         'unapplied_deposits', 'account_reserved', 'reconciliation_suspense'));
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table ledger_accounts drop constraint ledger_accounts_purpose_check;
    alter table ledger_accounts add constraint ledger_accounts_purpose_check
      check (purpose in ('customer_funds', 'rail_clearing', 'chain_treasury', 'platform_fees', 'developer_fees', 'fx_conversion',
                         'unapplied_deposits', 'account_reserved'));
    drop table reconciliation_days;
    drop table reconciliation_resolutions;
    drop function reconciliation_resolutions_append_only;
    drop index reconciliation_exceptions_listed;
    alter table reconciliation_exceptions drop constraint reconciliation_exceptions_status_check;
    alter table reconciliation_exceptions drop column environment, drop column rail, drop column updated_at;
    alter table reconciliation_runs drop column environment;
    alter table developers drop column operator;
  `.execute(db);
}
