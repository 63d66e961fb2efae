import { createHmac } from 'node:crypto';
import { setTimeout as wait } from 'node:timers/promises';
import { sql } from 'kysely';
import type { DataCipher } from '../crypto';
import type { Db } from '../db';
import type { EventRow, WebhookEndpointRow } from '../db/schema';
import { serializeEvent } from '../domain/events';
import { signingSecrets } from './endpoints';
import { postWebhook, type PostOutcome } from './http';

export interface DeliveryOptions {
  /** The first retry waits this long; each next one twice as long (with jitter), up to an hour. */
  retryBaseMs: number;
  /** A delivery still failing this long after its event was queued fails for good; its endpoint is marked failing. */
  retryWindowMs: number;
  timeoutMs: number;
}

type DeliveryDeps = { db: Db; cipher: DataCipher };

/** A delivery being sent: leased (its next attempt pushed out) so that a crash mid-send retries it later, under the same event id. */
interface ClaimedDelivery {
  id: number;
  event_id: string;
  attempts: number;
  created_at: Date;
  /** created_at to the microsecond, as stored: a redelivery requested while this one is in flight changes it. */
  requested_at: string;
  /** Its event, read with the claim (null: the event no longer exists). */
  event: EventRow | null;
}

/** Up to this many deliveries go to one endpoint at once (a round, recorded in one transaction). */
const CONCURRENCY = 16;
const BATCH = 64;
const MAX_BACKOFF_MS = 3600_000;

/** `X-Webhook-Signature`: lowercase hex HMAC-SHA256 of the exact body with each signing secret, comma-separated (two during a rotation). */
export function webhookSignature(secrets: string[], body: string): string {
  return secrets.map((secret) => createHmac('sha256', secret).update(body).digest('hex')).join(',');
}

/** When the next attempt goes, after `attempts` failed ones: exponential, with ±20 % jitter so retries do not march in step. */
export function retryDelayMs(attempts: number, baseMs: number, random = Math.random): number {
  const exponential = Math.min(baseMs * 2 ** Math.max(0, attempts - 1), MAX_BACKOFF_MS);
  return Math.round(exponential * (0.8 + 0.4 * random()));
}

/** The delivery is as it was claimed: no redelivery was requested meanwhile (`redeliver` sets created_at). */
const unchangedSinceClaim = (d: ClaimedDelivery) => sql<boolean>`created_at = ${d.requested_at}::timestamptz`;

/** The due deliveries of an endpoint, leased, each with its event: one statement. */
async function claimDue(db: Db, endpointId: string, leaseMs: number): Promise<ClaimedDelivery[]> {
  const now = new Date();
  const { rows } = await sql<Omit<ClaimedDelivery, 'event'> & { event: (Omit<EventRow, 'created_at'> & { created_at: string }) | null }>`
    update webhook_deliveries d set next_attempt_at = ${new Date(now.getTime() + leaseMs)}
    where d.id in (
      select id from webhook_deliveries
      where endpoint_id = ${endpointId} and status = 'pending' and next_attempt_at <= ${now}
      order by next_attempt_at, id limit ${BATCH} for update skip locked)
    returning d.id, d.event_id, d.attempts, d.created_at, d.created_at::text as requested_at,
      (select to_jsonb(e) from events e where e.id = d.event_id) as event`.execute(db);
  return rows.map((r) => ({ ...r, event: r.event && { ...r.event, created_at: new Date(r.event.created_at) } }));
}

/** When the endpoint's next pending delivery is due (a retry, or one leased now), or null when none is pending. */
async function nextAttemptAt(db: Db, endpointId: string): Promise<Date | null> {
  const row = await db.selectFrom('webhook_deliveries').select((eb) => eb.fn.min('next_attempt_at').as('at'))
    .where('endpoint_id', '=', endpointId).where('status', '=', 'pending').executeTakeFirst();
  return row?.at ? new Date(row.at) : null;
}

/** How long to wait before the next look after `idleLooks` looks in a row found nothing: `pollMs`, doubling, up to `idlePollMs`. */
export function idleWaitMs(idleLooks: number, pollMs: number, idlePollMs: number): number {
  return Math.max(pollMs, Math.min(idlePollMs, pollMs * 2 ** Math.min(Math.max(0, idleLooks - 1), 20)));
}

/** The delivery loop's settings, from configuration. */
export interface DeliverySettings extends DeliveryOptions {
  /** The wait after a look that sent something, and the first wait once the endpoint falls quiet. */
  pollMs: number;
  /** The longest wait of a quiet endpoint (the waits double up to it); never past its next scheduled retry. */
  idlePollMs: number;
}

export interface DeliveryLoopOptions extends DeliverySettings {
  maxWaitMs: number;
  beat: () => void;
  signal?: AbortSignal;
}

/**
 * Sends what is due to one endpoint, for up to `maxWaitMs`: due deliveries in batches, up to
 * CONCURRENCY at once. When nothing is due it looks again after `pollMs`, then waits twice as long
 * each quiet look up to `idlePollMs`, but never past the endpoint's next scheduled retry: a quiet
 * endpoint costs the database little, and retries keep their schedule. `beat` after each look (the
 * activity heartbeats). `gone`: the endpoint was deleted (or its creation never committed), and its
 * loop can end.
 */
export async function deliverDueWebhooks(
  deps: DeliveryDeps, endpointId: string, opts: DeliveryLoopOptions,
): Promise<{ delivered: number; failed: number; gone: boolean }> {
  const until = Date.now() + opts.maxWaitMs;
  const totals = { delivered: 0, failed: 0, gone: false };
  let idleLooks = 0;
  // An abort ends a wait early; the check at the top of the loop then ends the loop.
  const pause = (ms: number) => wait(Math.min(ms, Math.max(0, until - Date.now())), undefined, { signal: opts.signal }).catch(() => undefined);
  for (;;) {
    opts.signal?.throwIfAborted();
    const endpoint = await deps.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', endpointId).executeTakeFirst();
    if (endpoint?.deleted_at) return { ...totals, gone: true };
    if (!endpoint) {
      // The API starts this loop inside the transaction that creates the endpoint, so the first look
      // may come before that commits. Still not there when the period ends: that creation was rolled back.
      if (Date.now() >= until) return { ...totals, gone: true };
      opts.beat();
      await pause(opts.pollMs);
      continue;
    }
    // A disabled endpoint is sent nothing, not even what was queued before: that waits until it is enabled.
    const claimed = endpoint.status === 'disabled' ? [] : await claimDue(deps.db, endpointId, opts.timeoutMs * 2 + 5_000);
    if (claimed.length > 0) {
      const gone = claimed.filter((c) => !c.event);
      if (gone.length > 0) {
        // Events removed by hand (retention, a benchmark's reset): nothing to send.
        await deps.db.updateTable('webhook_deliveries').set({ status: 'failed', last_error: 'the event no longer exists' })
          .where('id', 'in', gone.map((c) => c.id)).execute();
      }
      const sendable = claimed.filter((c) => c.event);
      for (let k = 0; k < sendable.length; k += CONCURRENCY) {
        const round = sendable.slice(k, k + CONCURRENCY);
        const secrets = signingSecrets(deps.cipher, endpoint, new Date());
        const outcomes = await Promise.all(round.map((c) => send(endpoint, secrets, c.event!, opts)));
        // Cut short (the worker stops): the round is not recorded; its leases expire and it is sent again.
        opts.signal?.throwIfAborted();
        await recordRound(deps.db, endpoint, round, outcomes, opts);
        for (const o of outcomes) totals[o.ok ? 'delivered' : 'failed']++;
        opts.beat();
      }
    }
    opts.beat();
    if (Date.now() >= until) return totals;
    if (claimed.length >= BATCH) continue;
    idleLooks = claimed.length > 0 ? 0 : idleLooks + 1;
    let waitMs = idleWaitMs(idleLooks, opts.pollMs, opts.idlePollMs);
    if (idleLooks > 0 && endpoint.status !== 'disabled') {
      const next = await nextAttemptAt(deps.db, endpointId);
      if (next) waitMs = Math.min(waitMs, Math.max(0, next.getTime() - Date.now()));
    }
    await pause(waitMs);
  }
}

type SendOutcome = PostOutcome & { ok: boolean; at: Date };

/** One attempt: the event signed (`sent_at` inside the signed body) and posted. */
async function send(endpoint: WebhookEndpointRow, secrets: string[], event: EventRow, opts: DeliveryOptions & { signal?: AbortSignal }): Promise<SendOutcome> {
  const at = new Date();
  const body = JSON.stringify({ ...serializeEvent(event), sent_at: at.toISOString() });
  const outcome = await postWebhook(endpoint.url, body, {
    'x-webhook-id': event.id,
    'x-webhook-signature': webhookSignature(secrets, body),
  }, { timeoutMs: opts.timeoutMs, publicOnly: endpoint.environment === 'production', signal: opts.signal });
  return { ...outcome, ok: outcome.statusCode !== undefined && outcome.statusCode >= 200 && outcome.statusCode < 300, at };
}

/**
 * A round of attempts, recorded in one transaction: every attempt, the deliveries that succeeded
 * settled at once, each failure rescheduled (or given up at the end of its window, marking the
 * endpoint failing). A delivery whose redelivery was requested while it was in flight stays due:
 * it is sent again.
 */
async function recordRound(db: Db, endpoint: WebhookEndpointRow, round: ClaimedDelivery[], outcomes: SendOutcome[], opts: DeliveryOptions) {
  const attempts = (q: Db) => q.insertInto('webhook_attempts').values(round.map((d, i) => ({
    delivery_id: d.id, attempted_at: outcomes[i]!.at, status_code: outcomes[i]!.statusCode ?? null, error: outcomes[i]!.error ?? null,
    duration_ms: outcomes[i]!.durationMs,
  })));
  const delivered = round.filter((_, i) => outcomes[i]!.ok);
  const settled = () => sql`
    update webhook_deliveries d set status = 'delivered', attempts = d.attempts + 1, delivered_at = ${new Date()}, last_error = null
    from (values ${sql.join(delivered.map((d) => sql`(${d.id}::bigint, ${d.requested_at}::timestamptz)`))}) as c (id, requested_at)
    where d.id = c.id and d.created_at = c.requested_at`;
  // The common round, every attempt delivered: its attempts and the settled deliveries as one statement.
  if (delivered.length === round.length) {
    await sql`with attempts as (${attempts(db)}) ${settled()}`.execute(db);
    return;
  }
  await db.transaction().execute(async (trx) => {
    await attempts(trx).execute();
    if (delivered.length > 0) await settled().execute(trx);
    for (const [i, d] of round.entries()) {
      const o = outcomes[i]!;
      if (o.ok) continue;
      const error = o.error ?? `answered ${o.statusCode}`;
      const attempts = d.attempts + 1;
      const next = new Date(Date.now() + retryDelayMs(attempts, opts.retryBaseMs));
      const givesUp = next.getTime() - d.created_at.getTime() > opts.retryWindowMs;
      await trx.updateTable('webhook_deliveries').set({ status: givesUp ? 'failed' : 'pending', attempts, next_attempt_at: next, last_error: error })
        .where('id', '=', d.id).where(unchangedSinceClaim(d)).execute();
      if (givesUp) {
        await trx.updateTable('webhook_endpoints').set({ status: 'failing', status_reason: `${d.event_id} not delivered after ${attempts} attempts: ${error}`, updated_at: new Date() })
          .where('id', '=', endpoint.id).where('status', '=', 'enabled').execute();
      }
    }
  });
}
