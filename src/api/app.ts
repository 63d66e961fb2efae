import express, { type NextFunction, type Request, type Response } from 'express';
import { codecRouter } from './codec';
import { checkBrowserOrigin, preflightHandler } from './cors';
import { ApiKeyAuthenticator } from './auth';
import type { AppDeps } from './context';
import { ApiError, invalidField } from '../errors';
import { jsonDepthBreach } from '../domain/validation';
import { IdempotencyStore } from './idempotency';
import { buildOpenApiDocument } from './openapi';
import { routeHandler, templateRegex, type RouteDef } from './route';
import { newId } from '../ids';
import { allRoutes } from '../resources';
import { EVENT_PAYLOADS } from '../resources/events/payloads';
import { hostedKycRouter } from '../resources/kyc/hosted-page';
import { railWebhookRouter } from '../resources/transfers/rail-webhook';
import { isDependencyDown } from './dependency-errors';
import { ChainNeedsOperatorError } from '../chains/chain-adapter';

// 12 MB: KYC documents; an MPC session's rounds (a key generation's third round is two messages of about 0.5 MB each, and the schema takes sealed messages of up to 2 MB).
const LARGE_BODY_PATHS = [/^\/v0\/customers\/[^/]+\/kyc$/, /^\/kyc\/[^/]+\/submit$/, /^\/v0\/wallets\/[^/]+\/mpc_sessions\/[^/]+\/messages$/];

function toExpressPath(template: string) {
  return template.replace(/\{(\w+)\}/g, ':$1');
}

export function createApp(deps: AppDeps, routes: RouteDef[] = allRoutes) {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', false);
  const authenticator = new ApiKeyAuthenticator(deps.db);
  const idempotency = new IdempotencyStore(deps.db, {
    retentionHours: deps.config.IDEMPOTENCY_RETENTION_HOURS,
    lockSeconds: deps.config.IDEMPOTENCY_LOCK_SECONDS,
  });
  const openapi = buildOpenApiDocument(routes, deps.config.publicBaseUrl, EVENT_PAYLOADS);

  // Request-Id on every response and every log line; access log without bodies or query strings.
  app.use((req, res, next) => {
    const requestId = newId('request');
    res.locals.requestId = requestId;
    res.setHeader('Request-Id', requestId);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const path = req.path.startsWith('/kyc/') ? '/kyc/:token' : req.path;
      deps.log.info(
        {
          request_id: requestId,
          method: req.method,
          path,
          status: res.statusCode,
          duration_ms: Number(process.hrtime.bigint() - started) / 1e6,
          developer_id: res.locals.auth?.developerId,
          key_id: res.locals.auth?.keyId,
        },
        'request',
      );
    });
    next();
  });

  // The fiat-rail provider's webhook reads its raw body (the signature covers the exact bytes).
  app.use('/provider-webhooks/rails', railWebhookRouter(deps));
  // The Temporal Web UI's remote codec (payloads are encrypted), for requests from this machine only.
  app.use('/codec', codecRouter(deps.cipher));

  // JSON bodies only: 415 for other media types, 413 over the limit.
  const smallJson = express.json({ limit: '1mb', type: () => true });
  const largeJson = express.json({ limit: '12mb', type: () => true });
  app.use((req, res, next) => {
    const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
    if (!hasBody) return next();
    if (!req.is('application/json')) {
      return next(new ApiError('unsupported_media_type', 'Request bodies must be JSON (Content-Type: application/json)', {
        location: 'header',
        key: 'Content-Type',
      }));
    }
    return (LARGE_BODY_PATHS.some((r) => r.test(req.path)) ? largeJson : smallJson)(req, res, (err?: unknown) => {
      if (err) return next(err);
      // Refused before anything walks the body: no code after this recurses deeper than the bound.
      const tooDeep = jsonDepthBreach(req.body);
      if (tooDeep) return next(invalidField('body', tooDeep.key, `Invalid '${tooDeep.key.slice(0, 200)}': ${tooDeep.reason}`));
      return next();
    });
  });

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const checks = await readiness(deps);
    res.status(checks.database === 'ok' && checks.temporal === 'ok' ? 200 : 503).json({ status: checks });
  });
  app.get('/v0/openapi.json', (_req, res) => {
    res.json(openapi);
  });
  app.use('/kyc', hostedKycRouter(deps));

  // Browsers' preflights carry no key: answered before authentication (src/api/cors.ts).
  app.use('/v0', preflightHandler(routes));

  // Everything else under /v0 needs an API key, then passes the per-key rate limit.
  app.use('/v0', async (req, res, next) => {
    try {
      const auth = await authenticator.authenticate(req.header('Api-Key'));
      res.locals.auth = auth;
      checkBrowserOrigin(req, res, auth);
      const decision = await deps.rateLimiter.hit(auth.keyId, auth.limits).catch((err) => {
        // The limiter's store (Redis) being down must not take payments down with it: fail open, loudly.
        deps.log.warn({ err: String(err) }, 'rate limiter unavailable; request allowed');
        return undefined;
      });
      if (!decision) return next();
      res.setHeader('RateLimit-Limit', String(decision.limit));
      res.setHeader('RateLimit-Remaining', String(decision.remaining));
      res.setHeader('RateLimit-Reset', String(decision.reset));
      if (!decision.allowed) {
        const message =
          decision.code === 'daily_quota_exceeded'
            ? `Daily request quota of ${auth.limits.perDay} exceeded`
            : `Rate limit of ${auth.limits.perSecond} requests per second exceeded`;
        throw new ApiError(decision.code!, message, undefined, { 'Retry-After': String(decision.retryAfter) });
      }
      next();
    } catch (err) {
      next(err);
    }
  });

  for (const route of routes) {
    const handle = routeHandler(route, deps, idempotency);
    app[route.method](toExpressPath(route.path), (req: Request, res: Response, next: NextFunction) => {
      handle(req, res).catch(next);
    });
  }

  // Unknown path → 404; known path, other method → 405 with Allow.
  const matchers = routes.map((r) => ({ regex: templateRegex(r.path), method: r.method.toUpperCase() }));
  app.use((req, _res, next) => {
    const allowed = matchers.filter((m) => m.regex.test(req.path)).map((m) => m.method);
    if (allowed.length > 0) {
      return next(new ApiError('method_not_allowed', `${req.method} is not allowed on ${req.path}`, undefined, {
        Allow: [...new Set(allowed)].join(', '),
      }));
    }
    next(new ApiError('not_found', `Unknown route ${req.method} ${req.path}`));
  });

  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const apiError = err instanceof URIError ? undecodablePath(req.path, routes) : toApiError(err);
    if (apiError.status >= 500) {
      deps.log.error({ request_id: res.locals.requestId, err: describe(err) }, 'request failed');
    }
    for (const [k, v] of Object.entries(apiError.headers)) res.setHeader(k, v);
    res.status(apiError.status).json(apiError.toBody());
  });

  return app;
}

/**
 * A path parameter the router could not percent-decode (`%`, `%E0%A4%A`, `%C0%AF`): a 400 naming the
 * parameter of the route the path has the shape of.
 */
function undecodablePath(path: string, routes: RouteDef[]): ApiError {
  const segments = path.split('/');
  const template = routes.map((r) => r.path).find((t) => templateRegex(t).test(path));
  const names = template?.split('/') ?? [];
  const index = segments.findIndex((segment) => {
    try {
      decodeURIComponent(segment);
      return false;
    } catch {
      return true;
    }
  });
  const name = /^\{(\w+)\}$/.exec(names[index] ?? '')?.[1] ?? '';
  return new ApiError('invalid_request', `Invalid path${name ? ` parameter '${name}'` : ''}: malformed percent-encoding`, { location: 'path', key: name });
}

/** An error as the log keeps it, with its cause's message and code (a gRPC status, a PostgreSQL code), one level down. */
function describe(err: unknown) {
  if (!(err instanceof Error)) return { message: String(err) };
  const cause = err.cause as { message?: unknown; code?: unknown } | undefined;
  return { name: err.name, message: err.message, stack: err.stack, ...(cause ? { cause: { message: String(cause.message ?? cause), code: cause.code } } : {}) };
}

function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const e = err as { type?: string; status?: number };
  if (e?.type === 'entity.too.large') return new ApiError('payload_too_large', 'Request body is over the size limit');
  if (e?.type === 'entity.parse.failed') {
    return new ApiError('invalid_request', 'Malformed JSON body', { location: 'body', key: '' });
  }
  if (e?.type === 'charset.unsupported' || e?.type === 'encoding.unsupported') {
    return new ApiError('unsupported_media_type', 'Unsupported body encoding');
  }
  if (err instanceof ChainNeedsOperatorError) {
    return new ApiError('service_unavailable', `${err.chain} is unavailable until an operator acts: ${err.message}. Nothing was done; the other chains are unaffected.`, undefined, {
      'Retry-After': '60',
    });
  }
  if (isDependencyDown(err)) {
    return new ApiError('service_unavailable', 'A dependency is unavailable; nothing was done. Retry later.', undefined, {
      'Retry-After': '1',
    });
  }
  return new ApiError('internal_error', 'Internal error; nothing was half-done. It is safe to retry with the same Idempotency-Key.');
}

async function readiness(deps: AppDeps) {
  const timeout = <T>(p: Promise<T>) =>
    Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), 2000))]);
  const [database, temporal] = await Promise.all([
    timeout(deps.db.selectNoFrom((eb) => eb.lit(1).as('one')).execute()).then(() => 'ok', () => 'unavailable'),
    timeout(deps.temporal.workflowService.getSystemInfo({})).then(() => 'ok', () => 'unavailable'),
  ]);
  // Not a reason to be unready (the sandbox screens on the snapshot), but said where operators look.
  const sanctions = deps.sanctions.snapshotWarning() ?? (deps.sanctions.ready ? 'ok' : 'no lists loaded');
  // Also not a reason to be unready: what live keys can use, and what answers them 503.
  // A chain that needs an operator is degraded, not a reason to be unready: the other chains go on.
  const chains = Object.fromEntries(Object.entries(deps.chains).map(([name, c]) => [name, c.degraded?.() ? `degraded: ${c.degraded()}` : 'ok']));
  return { database, temporal, sanctions, chains, live: deps.availability.live };
}
