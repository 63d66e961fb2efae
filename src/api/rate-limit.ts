import Redis from 'ioredis';

export interface RateLimitDecision {
  allowed: boolean;
  code?: 'rate_limited' | 'daily_quota_exceeded';
  limit: number;
  remaining: number;
  /** Seconds until the current window resets. */
  reset: number;
  retryAfter?: number;
}

export interface RateLimiter {
  hit(keyId: string, limits: { perSecond: number; perDay: number }, now?: number): Promise<RateLimitDecision>;
  close(): Promise<void>;
}

function decide(secondCount: number, dayCount: number, limits: { perSecond: number; perDay: number }, now: number): RateLimitDecision {
  const reset = Math.max(1, Math.ceil((1000 - (now % 1000)) / 1000));
  const base = { limit: limits.perSecond, remaining: Math.max(0, limits.perSecond - secondCount), reset };
  if (dayCount > limits.perDay) {
    const secondsToMidnight = Math.ceil((86_400_000 - (now % 86_400_000)) / 1000);
    return { ...base, allowed: false, code: 'daily_quota_exceeded', retryAfter: secondsToMidnight };
  }
  if (secondCount > limits.perSecond) return { ...base, allowed: false, code: 'rate_limited', retryAfter: reset };
  return { ...base, allowed: true };
}

/** Fixed one-second windows plus a UTC-day quota, counted in this process only. */
export class InProcessRateLimiter implements RateLimiter {
  private seconds = new Map<string, { window: number; count: number }>();
  private days = new Map<string, { day: number; count: number }>();

  async hit(keyId: string, limits: { perSecond: number; perDay: number }, now = Date.now()) {
    const window = Math.floor(now / 1000);
    const day = Math.floor(now / 86_400_000);
    const s = this.seconds.get(keyId);
    const sec = s && s.window === window ? s : { window, count: 0 };
    sec.count++;
    this.seconds.set(keyId, sec);
    const d = this.days.get(keyId);
    const dd = d && d.day === day ? d : { day, count: 0 };
    dd.count++;
    this.days.set(keyId, dd);
    if (this.seconds.size > 100_000) this.seconds.clear();
    return decide(sec.count, dd.count, limits, now);
  }

  async close() {}
}

/**
 * Both counters bumped in one script: one round trip and one command per request. Expiries are
 * set when a window opens; a window key outlives its second so a late request still counts.
 */
const HIT_SCRIPT = `
local s = redis.call('INCR', KEYS[1])
if s == 1 then redis.call('EXPIRE', KEYS[1], 2) end
local d = redis.call('INCR', KEYS[2])
if d == 1 then redis.call('EXPIRE', KEYS[2], 90000) end
return {s, d}`;

type RedisWithHit = Redis & { rateLimitHit(secKey: string, dayKey: string): Promise<[number, number]> };

/** The same windows in Redis, so that limits hold across API processes. */
export class RedisRateLimiter implements RateLimiter {
  private readonly redis: RedisWithHit;
  constructor(url: string) {
    // Auto-pipelining sends the hits of concurrent requests to Redis in one write.
    const redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false, enableAutoPipelining: true });
    redis.defineCommand('rateLimitHit', { numberOfKeys: 2, lua: HIT_SCRIPT });
    redis.on('error', () => undefined);
    this.redis = redis as RedisWithHit;
  }

  async hit(keyId: string, limits: { perSecond: number; perDay: number }, now = Date.now()) {
    const secKey = `rl:s:${keyId}:${Math.floor(now / 1000)}`;
    const dayKey = `rl:d:${keyId}:${Math.floor(now / 86_400_000)}`;
    const [secondCount, dayCount] = await this.redis.rateLimitHit(secKey, dayKey);
    return decide(secondCount, dayCount, limits, now);
  }

  async close() {
    this.redis.disconnect();
  }
}

export const PLAN_LIMITS = {
  sandbox: { perSecond: 10, perDay: 10_000 },
  production: { perSecond: 100, perDay: 1_000_000 },
} as const;
