import { sql, type Transaction } from 'kysely';
import { configure } from 'safe-stable-stringify';
import { sha256Hex } from '../crypto';
import type { Database } from '../db/schema';
import type { Db } from '../db';
import { ApiError } from '../errors';
import type { Tenant } from '../db/tenant-scope';

export interface IdempotentRequest {
  tenant: Tenant;
  key: string;
  method: string;
  path: string;
  bodyHash: string;
}

export type ClaimResult =
  | { kind: 'claimed' }
  | { kind: 'replay'; status: number; body: unknown };

const PRINTABLE = /^[\x20-\x7e]{1,255}$/;

/** JSON with object keys sorted, so that key order and whitespace do not change a body's identity. */
const canonicalJson = configure({ deterministic: true }) as (value: unknown) => string;

/** A request body's identity under its idempotency key: the SHA-256 of its canonical JSON. */
export const bodyFingerprint = (body: unknown): string => sha256Hex(canonicalJson(body ?? null));

export function validateIdempotencyKey(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!PRINTABLE.test(value)) {
    throw new ApiError('invalid_request', 'Idempotency-Key must be 1 to 255 printable ASCII characters', {
      location: 'header',
      key: 'Idempotency-Key',
    });
  }
  return value;
}

/**
 * PostgreSQL-backed idempotency. The first request inserts an `in_progress` row; concurrent
 * duplicates lose the insert race and see 409 (still running) or the stored reply. Handlers that
 * change state store their reply in the same transaction as the change, so a crash can never leave
 * a change without its reply; an `in_progress` row whose owner died is taken over after `lockSeconds`.
 */
export class IdempotencyStore {
  constructor(
    private readonly db: Db,
    private readonly opts: { retentionHours: number; lockSeconds: number },
  ) {}

  async claim(r: IdempotentRequest): Promise<ClaimResult> {
    const now = new Date();
    const expiredBefore = new Date(now.getTime() - this.opts.retentionHours * 3600_000);
    const staleBefore = new Date(now.getTime() - this.opts.lockSeconds * 1000);
    const inserted = await sql<{ key: string }>`
      insert into idempotency_keys (developer_id, environment, key, method, path, body_hash, state, locked_at, created_at)
      values (${r.tenant.developerId}, ${r.tenant.environment}, ${r.key}, ${r.method}, ${r.path}, ${r.bodyHash},
              'in_progress', ${now}, ${now})
      on conflict (developer_id, environment, key) do update
        set method = excluded.method, path = excluded.path, body_hash = excluded.body_hash, state = 'in_progress',
            response_status = null, response_body = null, locked_at = excluded.locked_at, created_at = excluded.created_at
        where idempotency_keys.created_at < ${expiredBefore}
           or (idempotency_keys.state = 'in_progress' and idempotency_keys.locked_at < ${staleBefore}
               and idempotency_keys.method = excluded.method and idempotency_keys.path = excluded.path
               and idempotency_keys.body_hash = excluded.body_hash)
      returning key`.execute(this.db);
    if (inserted.rows.length > 0) return { kind: 'claimed' };

    const existing = await this.db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('developer_id', '=', r.tenant.developerId)
      .where('environment', '=', r.tenant.environment)
      .where('key', '=', r.key)
      .executeTakeFirst();
    if (!existing) return this.claim(r); // reaped between the two statements
    if (existing.method !== r.method || existing.path !== r.path || existing.body_hash !== r.bodyHash) {
      throw new ApiError(
        'idempotency_key_mismatch',
        `Idempotency-Key '${r.key}' was already used for ${existing.method} ${existing.path} with a different request`,
        { location: 'header', key: 'Idempotency-Key' },
      );
    }
    if (existing.state === 'in_progress') {
      throw new ApiError('idempotency_key_in_use', `A request with Idempotency-Key '${r.key}' is still being processed`, {
        location: 'header',
        key: 'Idempotency-Key',
      });
    }
    return { kind: 'replay', status: existing.response_status!, body: existing.response_body };
  }

  /** Stores the reply; call inside the handler's transaction when the handler changes state. */
  async complete(executor: Db | Transaction<Database>, r: IdempotentRequest, status: number, body: unknown) {
    await executor
      .updateTable('idempotency_keys')
      .set({ state: 'completed', response_status: status, response_body: JSON.stringify(body) })
      .where('developer_id', '=', r.tenant.developerId)
      .where('environment', '=', r.tenant.environment)
      .where('key', '=', r.key)
      .execute();
  }

  /** Forgets a claim whose request changed nothing (validation failure, fault), so a retry can run. */
  async release(r: IdempotentRequest) {
    await this.db
      .deleteFrom('idempotency_keys')
      .where('developer_id', '=', r.tenant.developerId)
      .where('environment', '=', r.tenant.environment)
      .where('key', '=', r.key)
      .where('state', '=', 'in_progress')
      .execute();
  }
}
