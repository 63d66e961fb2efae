import express, { type Router } from 'express';
import type { AppDeps } from '../../api/context';
import { ApiError } from '../../errors';
import { RailWebhookRejected, type RailEvent } from '../../providers/rails';
import { handleRailEvent } from '../../transfers/rail-events';

/**
 * `POST /provider-webhooks/rails`: the fiat-rail provider's events, the production path of what the
 * sandbox routes simulate (a deposit arrives, a payment comes back). Outside /v0: the provider is
 * not a developer and signs its calls instead of holding an API key (RailAdapter.parseWebhook).
 * Answers 200 once every event is handled (a repeat is a no-op), 401 for a bad signature, 400 for a
 * body it cannot read, 503 while Temporal or the database is down (the provider delivers again).
 */
export function railWebhookRouter(deps: AppDeps): Router {
  const router = express.Router();
  router.post('/', express.raw({ type: () => true, limit: '1mb' }), (req, res, next) => {
    let events: RailEvent[];
    try {
      events = deps.rails.parseWebhook({ headers: req.headers, rawBody: Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0) });
    } catch (err) {
      if (!(err instanceof RailWebhookRejected)) return next(err);
      return next(err.reason === 'signature'
        ? new ApiError('unauthorized', err.message, { location: 'header', key: 'Rail-Signature' })
        : new ApiError('invalid_request', err.message));
    }
    // The provider's own signed events are about real money: production virtual accounts only.
    Promise.all(events.map((event) => handleRailEvent(deps, event, 'production')))
      .then((outcomes) => res.status(200).json({ received: outcomes }))
      .catch(next);
  });
  return router;
}
