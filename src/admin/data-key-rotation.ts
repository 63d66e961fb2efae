import { sql } from 'kysely';
import type { DataCipher } from '../crypto';
import type { Db } from '../db';
import { accountIdentity } from '../external-accounts/external-account';

/** Every column that holds data encrypted with DataCipher (secrets and PII at rest). */
export const ENCRYPTED_COLUMNS = [
  ['customers', 'tax_id_encrypted'],
  ['kyc_submissions', 'document_front_encrypted'],
  ['kyc_submissions', 'selfie_encrypted'],
  ['kyc_submissions', 'beneficial_owners_encrypted'],
  ['screening_batches', 'entities_encrypted'],
  ['screenings', 'query_encrypted'],
  ['external_accounts', 'number_encrypted'],
  ['rail_events', 'sender_encrypted'],
  ['webhook_endpoints', 'secret_encrypted'],
  ['webhook_endpoints', 'previous_secret_encrypted'],
  ['bank_files', 'contents_encrypted'],
] as const;

const BATCH = 200;

/**
 * Re-encrypts every encrypted value that is not under the current key, and re-computes the
 * external accounts' fingerprints under it; afterwards DATA_ENCRYPTION_PREVIOUS_KEYS can be emptied.
 * Row by row (a value changed meanwhile is left to the next run), in id order, so it can run while
 * the API and workers serve (with the new key as current and the old ones as previous).
 */
export async function rotateDataKey(db: Db, cipher: DataCipher, onProgress: (line: string) => void = () => undefined) {
  const pattern = `v2:${cipher.currentKeyId}:%`;
  const reencrypted: Record<string, number> = {};
  for (const [table, column] of ENCRYPTED_COLUMNS) {
    let after = '';
    let count = 0;
    for (;;) {
      const { rows } = await sql<{ id: string; value: string }>`
        select id, ${sql.ref(column)} as value from ${sql.table(table)}
        where ${sql.ref(column)} is not null and ${sql.ref(column)} not like ${pattern} and id > ${after}
        order by id limit ${BATCH}`.execute(db);
      for (const row of rows) {
        const next = cipher.encrypt(decrypt(cipher, row.value, `${table}.${column} of ${row.id}`));
        const done = await sql`update ${sql.table(table)} set ${sql.ref(column)} = ${next}
          where id = ${row.id} and ${sql.ref(column)} = ${row.value}`.execute(db);
        count += Number(done.numAffectedRows ?? 0n);
      }
      if (rows.length < BATCH) break;
      after = rows[rows.length - 1]!.id;
    }
    reencrypted[`${table}.${column}`] = count;
    onProgress(`${table}.${column}: ${count} re-encrypted`);
  }

  let fingerprints = 0;
  let after = '';
  for (;;) {
    const rows = await db.selectFrom('external_accounts')
      .select(['id', 'type', 'routing_number', 'chain', 'address', 'number_encrypted', 'fingerprint'])
      .where('fingerprint', 'not like', `${cipher.currentKeyId}:%`).where('id', '>', after).orderBy('id').limit(BATCH).execute();
    for (const row of rows) {
      const secret = row.number_encrypted ? cipher.decryptText(row.number_encrypted) : null;
      const fingerprint = cipher.fingerprint(accountIdentity({ ...row, secret }));
      const done = await db.updateTable('external_accounts').set({ fingerprint }).where('id', '=', row.id).where('fingerprint', '=', row.fingerprint)
        .executeTakeFirst();
      fingerprints += Number(done.numUpdatedRows);
    }
    if (rows.length < BATCH) break;
    after = rows[rows.length - 1]!.id;
  }
  onProgress(`external_accounts.fingerprint: ${fingerprints} re-computed`);
  return { reencrypted, fingerprints };
}

function decrypt(cipher: DataCipher, value: string, what: string): Buffer {
  try {
    return cipher.decrypt(value);
  } catch (err) {
    throw new Error(`cannot decrypt ${what}: ${(err as Error).message}`);
  }
}
