import type { Environment } from '../db/schema';
import type { PlatformDeps } from '../deps';
import type { RateLimiter } from './rate-limit';

/** Everything a request handler may touch, built once per process. */
export interface AppDeps extends PlatformDeps {
  rateLimiter: RateLimiter;
}

export const PERMISSIONS = [
  'customers:read', 'customers:write',
  'accounts:read', 'accounts:write',
  'transfers:read', 'transfers:write',
  'payments:read', 'payments:write',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

export interface AuthContext {
  keyId: string;
  developerId: string;
  environment: Environment;
  kind: 'secret' | 'publishable';
  /** null: an unrestricted secret key. */
  permissions: Permission[] | null;
  limits: { perSecond: number; perDay: number };
  /** The developer's allowed browser origins (CORS); null: the environment's default. */
  allowedOrigins: string[] | null;
  /** A key of the platform's operators: it also reaches the operator routes (/v0/reconciliation/…). */
  operator: boolean;
}
