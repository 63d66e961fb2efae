import fs from 'node:fs';
import path from 'node:path';
import type { Db } from '../db';
import type { Environment } from '../db/schema';
import { PERMISSIONS, type Permission } from '../api/context';
import { sha256Hex } from '../crypto';
import { newId, secretBase62 } from '../ids';

/** A developer account; `operators`: the platform's own operators, whose secret keys also reach the operator routes. */
export async function createDeveloper(db: Db, input: { name: string; rateLimitPerSecond?: number; dailyQuota?: number; operators?: boolean }) {
  const id = newId('developer');
  await db
    .insertInto('developers')
    .values({
      id,
      name: input.name,
      rate_limit_per_second: input.rateLimitPerSecond ?? null,
      daily_quota: input.dailyQuota ?? null,
      allowed_origins: null,
      operator: input.operators ?? false,
      created_at: new Date(),
    })
    .execute();
  return { id, name: input.name };
}

/**
 * Sets the browser origins a developer's publishable keys may be used from (`https://app.example`,
 * scheme and host and any port, no path), or back to the default with null. Refuses anything else.
 */
export async function setAllowedOrigins(db: Db, developerId: string, origins: string[] | null) {
  for (const origin of origins ?? []) {
    if (!URL.canParse(origin) || new URL(origin).origin !== origin || !/^https?:$/.test(new URL(origin).protocol)) {
      throw new Error(`'${origin}' is not an origin: write scheme://host[:port], e.g. https://app.example.com`);
    }
  }
  const updated = await db.updateTable('developers').set({ allowed_origins: origins === null ? null : JSON.stringify(origins) })
    .where('id', '=', developerId).executeTakeFirst();
  if (updated.numUpdatedRows === 0n) throw new Error(`No developer ${developerId}`);
}

export interface CreateKeyInput {
  developerId: string;
  environment: Environment;
  kind: 'secret' | 'publishable';
  permissions?: Permission[];
  plan?: 'sandbox' | 'production' | 'enterprise';
}

/** Creates an API key and returns it in full: the only time it is ever shown. Only its hash is stored. */
export async function createApiKey(db: Db, input: CreateKeyInput) {
  const developer = await db.selectFrom('developers').select('id').where('id', '=', input.developerId).executeTakeFirst();
  if (!developer) throw new Error(`unknown developer ${input.developerId}`);
  for (const p of input.permissions ?? []) {
    if (!PERMISSIONS.includes(p)) throw new Error(`unknown permission '${p}' (one of ${PERMISSIONS.join(', ')})`);
  }
  if (input.kind === 'publishable' && input.permissions) throw new Error('publishable keys take no permission list');
  const key = `${input.kind === 'secret' ? 'sk' : 'pk'}_${input.environment === 'production' ? 'live' : 'test'}_${secretBase62(40)}`;
  const id = newId('apiKey');
  const plan = input.plan ?? (input.environment === 'production' ? 'production' : 'sandbox');
  await db
    .insertInto('api_keys')
    .values({
      id,
      developer_id: input.developerId,
      environment: input.environment,
      kind: input.kind,
      plan,
      permissions: input.permissions && input.permissions.length > 0 ? input.permissions : null,
      key_hash: sha256Hex(key),
      key_hint: key.slice(0, 12),
      created_at: new Date(),
      revoked_at: null,
    })
    .execute();
  return { id, key, plan, environment: input.environment, kind: input.kind };
}

export async function revokeApiKey(db: Db, keyId: string) {
  const result = await db
    .updateTable('api_keys')
    .set({ revoked_at: new Date() })
    .where('id', '=', keyId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) throw new Error(`no active key ${keyId}`);
}

/**
 * First start of a local stack (`npm start`, `npm run stack:cluster`): a default developer account and
 * a sandbox secret key. The key is saved (mode 0600) in `dir` so later starts can print it again; the
 * database keeps only its hash.
 */
export async function ensureDefaultSandboxKey(db: Db, dir: string): Promise<string> {
  const file = path.join(dir, 'default-sandbox-key');
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  const developer = await createDeveloper(db, { name: 'Default developer' });
  const key = await createApiKey(db, { developerId: developer.id, environment: 'sandbox', kind: 'secret' });
  fs.writeFileSync(file, key.key + '\n', { mode: 0o600 });
  return key.key;
}
