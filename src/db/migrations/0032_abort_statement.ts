import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- A statement of several changes that must all be made or none (a transfer's step with its
    -- payments and ledger movements, src/transfers/steps.ts) calls this when one of them was not:
    -- the error undoes the whole statement. SQLSTATE FP001 tells it from every other error.
    create function abort_statement(reason text) returns integer language plpgsql as $$
    begin
      raise exception using errcode = 'FP001', message = reason;
    end
    $$;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop function abort_statement(text)`.execute(db);
}
