import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { createDb, type Db } from '../../src/db';
import { stack, testDb } from '../harness';

// Statements prepared once per connection (src/db/prepared-statements.ts), against the real
// PostgreSQL: what is prepared, and what a migration under a running process does to it.

const table = `prepared_${randomBytes(4).toString('hex')}`;
let db: Db;

beforeAll(async () => {
  // One connection, so that every query below runs in the same session as pg_prepared_statements.
  db = createDb(stack().databaseUrl, 1, { preparedStatements: true });
  await sql`create table ${sql.table(table)} (id text primary key, amount_minor numeric not null)`.execute(testDb());
  await sql`insert into ${sql.table(table)} values ('a', 100), ('b', 250)`.execute(testDb());
});

afterAll(async () => {
  await db.destroy();
  await sql`drop table if exists ${sql.table(table)}`.execute(testDb());
});

const selectRow = (id: string) => db.selectFrom(table as never).selectAll().where('id' as never, '=', id as never).execute() as Promise<Record<string, unknown>[]>;

async function preparedLike(fragment: string): Promise<{ name: string }[]> {
  const r = await sql<{ name: string }>`select name from pg_prepared_statements where statement like ${`%${fragment}%`} and statement not like '%pg_prepared_statements%'`.execute(db);
  return r.rows;
}

test('a statement with parameters is prepared once and reused by every execution on the connection', async () => {
  expect(await selectRow('a')).toEqual([{ id: 'a', amount_minor: '100' }]);
  expect(await selectRow('b')).toEqual([{ id: 'b', amount_minor: '250' }]);
  expect(await selectRow('a')).toEqual([{ id: 'a', amount_minor: '100' }]);
  const prepared = await preparedLike(`from "${table}" where "id" = $1`);
  expect(prepared).toHaveLength(1);
  expect(prepared[0]!.name).toMatch(/^s[\w-]{24}_0$/);
});

test('a statement without parameters is not prepared', async () => {
  const r = await sql<{ n: string }>`select count(*)::text as n from ${sql.table(table)}`.execute(db);
  expect(r.rows).toEqual([{ n: '2' }]);
  expect(await preparedLike(`select count(*)::text as n from "${table}"`)).toEqual([]);
});

test('a migration that changes a prepared statement\'s columns fails it once; the retry prepares it again', async () => {
  await selectRow('a');
  // Another process (a deploy's migration) adds a column while this connection holds the statement.
  await sql`alter table ${sql.table(table)} add column note text`.execute(testDb());
  await expect(selectRow('a')).rejects.toThrow(/cached plan must not change result type/);
  expect(await selectRow('a')).toEqual([{ id: 'a', amount_minor: '100', note: null }]);
  expect(await selectRow('b')).toEqual([{ id: 'b', amount_minor: '250', note: null }]);
  const names = (await preparedLike(`from "${table}" where "id" = $1`)).map((p) => p.name).sort();
  expect(names).toHaveLength(2);
  expect(names[1]).toMatch(/_1$/);
});
