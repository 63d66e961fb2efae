import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { localKeyVault } from '../../src/keys/key-vault';
import { stack, testDb } from './index';

/** A secret (hex) is in no row of any table and in no log of the stack's processes. */
export async function expectNowhereInClear(hex: string) {
  const { rows } = await sql<{ table_name: string }>`select table_name from information_schema.tables where table_schema = 'public'`.execute(testDb());
  for (const { table_name } of rows) {
    const found = await sql<{ n: string }>`select count(*)::text as n from ${sql.table(table_name)} t where t::text ilike ${`%${hex}%`}`.execute(testDb());
    expect([table_name, found.rows[0]!.n]).toEqual([table_name, '0']);
  }
  for (const file of readdirSync(stack().logDir).filter((f) => f.endsWith('.log'))) {
    expect([file, readFileSync(path.join(stack().logDir, file), 'utf8').includes(hex)]).toEqual([file, false]);
  }
}

/** The key vault of the stack's processes (its WALLET_KEK): what opens a wallet's sealed key. */
export const stackKeyVault = () => localKeyVault({ kek: Buffer.from(stack().processEnv.WALLET_KEK!, 'base64'), dataDir: '/nonexistent', allowGenerated: false });
