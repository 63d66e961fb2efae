import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- A compliance operator's decision on a KYC case in manual_review: {decision, reasons, operator, decided_at}.
    alter table customers add column kyc_decision jsonb
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table customers drop column kyc_decision`.execute(db);
}
