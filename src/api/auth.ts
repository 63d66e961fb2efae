import { sha256Hex } from '../crypto';
import type { Db } from '../db';
import { ApiError } from '../errors';
import type { AuthContext, Permission } from './context';
import { PLAN_LIMITS } from './rate-limit';

const KEY_FORMAT = /^(sk|pk)_(live|test)_[0-9A-Za-z]{32,}$/;

/**
 * Looks an API key up by its SHA-256 hash. Keys carry 190+ bits of entropy, so a fast hash is
 * enough (no password stretching needed). A short cache keeps the hot path off the database;
 * a revoked key stops working within `cacheMs`.
 */
export class ApiKeyAuthenticator {
  private cache = new Map<string, { auth: AuthContext | null; expires: number }>();

  constructor(private readonly db: Db, private readonly cacheMs = 2000) {}

  async authenticate(header: string | undefined): Promise<AuthContext> {
    if (!header) throw new ApiError('unauthorized', 'Missing Api-Key header', { location: 'header', key: 'Api-Key' });
    const key = header.trim();
    if (!KEY_FORMAT.test(key)) {
      throw new ApiError('unauthorized', 'Malformed API key: expected sk_test_…, sk_live_…, pk_test_… or pk_live_…', {
        location: 'header',
        key: 'Api-Key',
      });
    }
    const hash = sha256Hex(key);
    const now = Date.now();
    const cached = this.cache.get(hash);
    const auth = cached && cached.expires > now ? cached.auth : await this.load(hash);
    if (!cached || cached.expires <= now) {
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(hash, { auth, expires: now + this.cacheMs });
    }
    if (!auth) throw new ApiError('unauthorized', 'Invalid or revoked API key', { location: 'header', key: 'Api-Key' });
    return auth;
  }

  private async load(hash: string): Promise<AuthContext | null> {
    const row = await this.db
      .selectFrom('api_keys')
      .innerJoin('developers', 'developers.id', 'api_keys.developer_id')
      .select([
        'api_keys.id', 'api_keys.developer_id', 'api_keys.environment', 'api_keys.kind', 'api_keys.plan',
        'api_keys.permissions', 'api_keys.revoked_at', 'developers.rate_limit_per_second', 'developers.daily_quota', 'developers.allowed_origins', 'developers.operator',
      ])
      .where('api_keys.key_hash', '=', hash)
      .executeTakeFirst();
    if (!row || row.revoked_at) return null;
    const limits =
      row.plan === 'enterprise'
        ? { perSecond: row.rate_limit_per_second ?? 1000, perDay: row.daily_quota ?? 10_000_000 }
        : PLAN_LIMITS[row.plan];
    return {
      keyId: row.id,
      developerId: row.developer_id,
      environment: row.environment,
      kind: row.kind,
      permissions: row.permissions as Permission[] | null,
      limits,
      allowedOrigins: row.allowed_origins,
      operator: row.operator,
    };
  }
}

/** A write permission includes the matching read permission. */
export function hasPermission(auth: AuthContext, needed: Permission | 'unrestricted'): boolean {
  if (auth.kind !== 'secret') return false;
  if (auth.permissions === null) return true;
  if (needed === 'unrestricted') return false;
  if (auth.permissions.includes(needed)) return true;
  return needed.endsWith(':read') && auth.permissions.includes(needed.replace(':read', ':write') as Permission);
}
