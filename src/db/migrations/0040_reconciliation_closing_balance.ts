import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- A statement's run compares the closing balance with the books' position of the account
    -- (docs/RECONCILIATION.md, "The closing balance"): both sides and what is left unexplained.
    alter table reconciliation_runs add column books_minor numeric;
    alter table reconciliation_runs add column explained_minor numeric;
    alter table reconciliation_runs add column balance_difference_minor numeric;
    -- Credits the run matched short, within tolerance (the bank holds that much less than the books).
    alter table reconciliation_runs add column shortfall_minor numeric not null default 0;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table reconciliation_runs drop column books_minor, drop column explained_minor, drop column balance_difference_minor, drop column shortfall_minor`.execute(db);
}
