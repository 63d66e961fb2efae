import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- The browser origins a developer's publishable keys may be used from (docs/API.md, "CORS"):
    -- null keeps the default (any origin in the sandbox, none in live).
    alter table developers add column allowed_origins jsonb;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table developers drop column allowed_origins`.execute(db);
}
