import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../errors';
import type { AuthContext } from './context';
import { templateRegex, type RouteDef } from './route';

// Browsers may call the API with publishable keys only (docs/API.md, "CORS"): a preflight is
// answered for the routes a publishable key may use, and the request itself is checked against the
// developer's allowed origins once its key is known. Secret keys never belong in a browser.

const ALLOWED_HEADERS = 'Api-Key, Content-Type, Idempotency-Key';
const EXPOSED_HEADERS = 'Request-Id, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Idempotent-Replayed, Retry-After';
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * Answers preflights (OPTIONS with Origin and Access-Control-Request-Method), which carry no key: a
 * route publishable keys may call gets the CORS headers for that origin, any other gets none, so
 * the browser sends nothing. Whether the origin is allowed is decided on the request itself.
 */
export function preflightHandler(routes: RouteDef[]) {
  const publishable = routes.filter((r) => r.publishable)
    .map((r) => ({ method: r.method.toUpperCase(), regex: templateRegex(r.path) }));
  return (req: Request, res: Response, next: NextFunction) => {
    const origin = req.header('Origin');
    const method = req.header('Access-Control-Request-Method');
    if (req.method !== 'OPTIONS' || !origin || !method) return next();
    res.setHeader('Vary', 'Origin, Access-Control-Request-Method');
    if (publishable.some((r) => r.method === method.toUpperCase() && r.regex.test(req.baseUrl + req.path))) {
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Access-Control-Allow-Methods', method.toUpperCase());
      res.setHeader('Access-Control-Allow-Headers', ALLOWED_HEADERS);
      res.setHeader('Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE_SECONDS));
    }
    res.status(204).end();
  };
}

/**
 * For a request that names its Origin (a browser's): a secret key is refused; a publishable key is
 * let through from the developer's allowed origins (default: any in the sandbox, none in live), and
 * its answer readable by that origin.
 */
export function checkBrowserOrigin(req: Request, res: Response, auth: AuthContext): void {
  const origin = req.header('Origin');
  if (!origin) return;
  if (auth.kind === 'secret') {
    throw new ApiError('forbidden', 'Secret keys must never be used from a browser (this request carries an Origin header); '
      + 'use a publishable key in client-side code, or call from your server without an Origin', { location: 'header', key: 'Origin' });
  }
  const allowed = auth.allowedOrigins ?? (auth.environment === 'sandbox' ? ['*'] : []);
  if (!allowed.includes('*') && !allowed.includes(origin)) {
    throw new ApiError('forbidden', `Origin ${origin.slice(0, 200)} is not among this developer's allowed origins `
      + '(npm run cli -- developers allow-origins)', { location: 'header', key: 'Origin' });
  }
  res.setHeader('Access-Control-Allow-Origin', allowed.includes('*') ? '*' : origin);
  res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS);
  res.setHeader('Vary', 'Origin');
}
