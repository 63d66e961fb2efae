import type { Request, Response } from 'express';
import type { Kysely, Transaction } from 'kysely';
import { z } from 'zod';
import type { Database } from '../db/schema';
import type { AppDeps, AuthContext, Permission } from './context';
import type { Tenant } from '../db/tenant-scope';
import { findTextRuleBreach } from '../domain/validation';
import { fromZodError } from './errors';
import { ApiError, invalidField, type SourceLocation } from '../errors';
import { hasPermission } from './auth';
import { bodyFingerprint, type IdempotencyStore, type IdempotentRequest, validateIdempotencyKey } from './idempotency';

export interface Reply<B = unknown> {
  status: number;
  body: B;
}

type AnyObject = z.ZodType<Record<string, unknown>>;

export interface HandlerContext<P, Q, B> {
  deps: AppDeps;
  auth: AuthContext;
  tenant: Tenant;
  params: P;
  query: Q;
  body: B;
  requestId: string;
  /**
   * Runs `fn` in one database transaction. When the request carries an Idempotency-Key, the reply
   * is stored in that same transaction: the change and its reply commit together or not at all.
   */
  write<R extends Reply>(fn: (trx: Transaction<Database>) => Promise<R>): Promise<R>;
  /**
   * For a change that is one SQL statement (atomic on its own): runs `fn` on the pool, without a
   * transaction's two extra round trips; with an Idempotency-Key, inside `write`'s transaction.
   */
  writeStatement<R extends Reply>(fn: (db: Kysely<Database> | Transaction<Database>) => Promise<R>): Promise<R>;
}

export interface RouteDef<P extends AnyObject = AnyObject, Q extends AnyObject = AnyObject, B extends z.ZodType = z.ZodType> {
  method: 'get' | 'post' | 'patch' | 'delete';
  /** OpenAPI-style template: /v0/customers/{customer_id} */
  path: string;
  summary: string;
  tag: string;
  /** 'unrestricted' needs a secret key without a permission list. */
  permission: Permission | 'unrestricted';
  /** Publishable keys may call this route (only KYC submission). */
  publishable?: boolean;
  /** Answers 404 to production keys. */
  sandboxOnly?: boolean;
  /** The platform operators' routes: answers 404 to any other developer's keys. */
  operator?: boolean;
  params?: P;
  query?: Q;
  body?: B;
  responses: Record<number, z.ZodType>;
  handler: (ctx: HandlerContext<z.output<P>, z.output<Q>, z.output<B>>) => Promise<Reply>;
}

/** The paths a route template matches: `/v0/customers/{customer_id}` → `^/v0/customers/[^/]+/?$`. */
export function templateRegex(template: string): RegExp {
  return new RegExp('^' + template.replace(/\{\w+\}/g, '[^/]+') + '/?$');
}

export function defineRoute<P extends AnyObject, Q extends AnyObject, B extends z.ZodType>(def: RouteDef<P, Q, B>) {
  return def as unknown as RouteDef;
}

/**
 * Validates one part of a request: first the text rule every string obeys (src/domain/validation.ts), then
 * the part's schema. Either failure is a 400 naming the field; nothing has been read or written yet.
 */
export function parseRequestPart<T extends z.ZodType>(schema: T | undefined, value: unknown, location: SourceLocation): any {
  const breach = findTextRuleBreach(value);
  if (breach) throw invalidField(location, breach.key, `Invalid '${breach.key}': ${breach.reason}`);
  if (!schema) return value ?? {};
  // With its input, an issue tells a missing field from one of the wrong type (fromZodError).
  const result = schema.safeParse(value ?? (location === 'body' ? undefined : {}), { reportInput: true });
  if (!result.success) throw fromZodError(result.error, location);
  return result.data;
}

/** Express handler for one route: permission, validation, idempotency, reply. */
export function routeHandler(route: RouteDef, deps: AppDeps, idempotency: IdempotencyStore) {
  return async (req: Request, res: Response) => {
    const auth = res.locals.auth as AuthContext;
    if ((route.sandboxOnly && auth.environment !== 'sandbox') || (route.operator && !auth.operator)) {
      throw new ApiError('not_found', `Unknown route ${req.method} ${req.path}`);
    }
    if (auth.kind === 'publishable' && !route.publishable) {
      throw new ApiError('forbidden', 'Publishable keys may only submit KYC documents; use a secret key');
    }
    if (auth.kind === 'secret' && !hasPermission(auth, route.permission)) {
      throw new ApiError(
        'forbidden',
        route.permission === 'unrestricted'
          ? 'This route needs an unrestricted secret key'
          : `This API key lacks the '${route.permission}' permission`,
      );
    }
    const params = parseRequestPart(route.params, req.params, 'path');
    const query = parseRequestPart(route.query, req.query, 'query');
    const body = route.body ? parseRequestPart(route.body, req.body, 'body') : undefined;
    // No body, or an empty object (what the JSON parser leaves when none came); an array, even empty, is a body.
    if (!route.body && req.body !== undefined && (Array.isArray(req.body) || typeof req.body !== 'object' || Object.keys(req.body ?? {}).length > 0)) {
      throw new ApiError('invalid_request', 'This route takes no request body', { location: 'body', key: '' });
    }

    const tenant: Tenant = { developerId: auth.developerId, environment: auth.environment };
    const key = route.method === 'post' ? validateIdempotencyKey(req.header('Idempotency-Key')) : undefined;
    const idem: IdempotentRequest | undefined = key
      ? { tenant, key, method: req.method, path: req.path, bodyHash: bodyFingerprint(req.body) }
      : undefined;

    if (idem) {
      const claim = await idempotency.claim(idem);
      if (claim.kind === 'replay') {
        res.setHeader('Idempotent-Replayed', 'true');
        res.status(claim.status).json(claim.body);
        return;
      }
    }

    let stored = false;
    const ctx: HandlerContext<unknown, unknown, unknown> = {
      deps,
      auth,
      tenant,
      params,
      query,
      body,
      requestId: res.locals.requestId,
      write: (fn) =>
        deps.db.transaction().execute(async (trx) => {
          const reply = await fn(trx);
          if (idem) {
            await idempotency.complete(trx, idem, reply.status, reply.body);
            stored = true;
          }
          return reply;
        }),
      writeStatement: (fn) => (idem ? ctx.write(fn) : fn(deps.db)),
    };

    let reply: Reply;
    try {
      reply = await route.handler(ctx as HandlerContext<any, any, any>);
    } catch (err) {
      if (idem && !stored) {
        // A 4xx that the handler decided (404, 409) is part of the request's outcome and is kept;
        // a fault (5xx, unexpected error) changed nothing, so the key is freed for a retry.
        if (err instanceof ApiError && err.status < 500 && ![400, 401, 403, 429].includes(err.status)) {
          await idempotency.complete(deps.db, idem, err.status, err.toBody());
        } else {
          await idempotency.release(idem).catch(() => undefined);
        }
      }
      throw err;
    }
    if (idem && !stored) await idempotency.complete(deps.db, idem, reply.status, reply.body);
    res.status(reply.status).json(reply.body);
  };
}
