import { randomBytes } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { z } from 'zod';
import type { DataCipher } from '../crypto';
import type { Database, Environment, WebhookEndpointRow } from '../db/schema';
import { findTenantRow, tenantRows, type Tenant } from '../db/tenant-scope';
import { EVENT_CATALOGUE } from '../domain/event-catalogue';
import { invalidField, notFound } from '../errors';
import { newId, objectId } from '../ids';
import { liveUrlProblem } from './addresses';

// A developer's webhook endpoints (docs/WEBHOOKS.md): where their events are delivered, signed with
// the endpoint's secret.

type Executor = Kysely<Database> | Transaction<Database>;

const eventName = z.string().min(1).max(100);

export const WebhookEndpointCreate = z.strictObject({
  url: z.string().trim().max(2048),
  enabled_events: z.array(eventName).min(1, 'must name at least one event, or "*"').max(100),
  description: z.string().trim().max(500).optional(),
});

export const WebhookEndpointUpdate = z.strictObject({
  url: z.string().trim().max(2048).optional(),
  enabled_events: z.array(eventName).min(1, 'must name at least one event, or "*"').max(100).optional(),
  description: z.string().trim().max(500).nullable().optional(),
  disabled: z.boolean().optional().describe('true: nothing is queued or sent until enabled again; false: enabled (a failing endpoint too)'),
});

export const WebhookEndpointSchema = z.object({
  id: objectId('whk'),
  object: z.literal('webhook_endpoint'),
  url: z.string(),
  description: z.string().nullable(),
  enabled_events: z.array(z.string()),
  status: z.enum(['enabled', 'disabled', 'failing']),
  status_reason: z.string().nullable().describe('Why it is failing: the last error of the delivery that gave up'),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
}).meta({ id: 'WebhookEndpoint' });

export const WebhookEndpointWithSecretSchema = WebhookEndpointSchema.extend({
  secret: z.string().describe('whsec_…: shown once, when created or rotated'),
}).meta({ id: 'WebhookEndpointWithSecret' });

export function serializeEndpoint(row: WebhookEndpointRow) {
  return {
    id: row.id, object: 'webhook_endpoint' as const, url: row.url, description: row.description, enabled_events: row.enabled_events,
    status: row.status, status_reason: row.status_reason, created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString(),
  };
}

/** Each name is in the event catalogue, or `*`: a 400 names the first entry that is not. */
function checkEnabledEvents(names: string[]) {
  names.forEach((name, i) => {
    if (name !== '*' && !(name in EVENT_CATALOGUE)) {
      throw invalidField('body', `enabled_events[${i}]`, `'${name}' is not an event name (see GET /v0/openapi.json, "webhooks"), nor "*"`);
    }
  });
}

/**
 * Live endpoints are https and public: an address written in the URL is checked here, a name when
 * each delivery connects (src/webhooks/addresses.ts). Sandbox endpoints may be http, and local.
 */
function checkUrl(url: string, environment: Environment) {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalidField('body', 'url', 'must be an absolute http(s) URL');
  }
  if (parsed.username || parsed.password) throw invalidField('body', 'url', 'must not carry credentials');
  if (environment === 'sandbox') {
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw invalidField('body', 'url', 'must be an http or https URL');
    return parsed.toString();
  }
  const problem = liveUrlProblem(parsed);
  if (problem) throw invalidField('body', 'url', problem);
  return parsed.toString();
}

const newSecret = () => `whsec_${randomBytes(24).toString('base64url')}`;

/** The tenant's endpoints that are not deleted. */
export const tenantEndpoints = (db: Executor, tenant: Tenant) => tenantRows(db, 'webhook_endpoints', tenant).where('deleted_at', 'is', null);

/** One of the tenant's endpoints, or the API's 404 (also once deleted). */
export async function findEndpoint(db: Executor, tenant: Tenant, id: string, opts: { forUpdate?: boolean } = {}) {
  const row = await findTenantRow(db, 'webhook_endpoints', tenant, id, { what: 'webhook endpoint', ...opts });
  if (row.deleted_at) throw notFound('webhook endpoint', id);
  return row;
}

export async function createEndpoint(
  trx: Executor, cipher: DataCipher, tenant: Tenant, body: z.output<typeof WebhookEndpointCreate>,
): Promise<{ row: WebhookEndpointRow; secret: string }> {
  checkEnabledEvents(body.enabled_events);
  const url = checkUrl(body.url, tenant.environment);
  const secret = newSecret();
  const now = new Date();
  const row = await trx.insertInto('webhook_endpoints').values({
    id: newId('webhook', now.getTime()), developer_id: tenant.developerId, environment: tenant.environment, url,
    description: body.description ?? null, enabled_events: JSON.stringify([...new Set(body.enabled_events)]), status: 'enabled', status_reason: null,
    secret_encrypted: cipher.encrypt(secret), previous_secret_encrypted: null, previous_secret_expires_at: null,
    created_at: now, updated_at: now, deleted_at: null,
  }).returningAll().executeTakeFirstOrThrow();
  return { row, secret };
}

export async function updateEndpoint(trx: Executor, tenant: Tenant, id: string, body: z.output<typeof WebhookEndpointUpdate>) {
  const row = await findEndpoint(trx, tenant, id, { forUpdate: true });
  if (body.enabled_events) checkEnabledEvents(body.enabled_events);
  return trx.updateTable('webhook_endpoints').set({
    ...(body.url !== undefined ? { url: checkUrl(body.url, tenant.environment) } : {}),
    ...(body.enabled_events ? { enabled_events: JSON.stringify([...new Set(body.enabled_events)]) } : {}),
    ...(body.description !== undefined ? { description: body.description } : {}),
    ...(body.disabled !== undefined ? { status: body.disabled ? 'disabled' : 'enabled', status_reason: null } : {}),
    updated_at: new Date(),
  }).where('id', '=', row.id).returningAll().executeTakeFirstOrThrow();
}

/** Deleted endpoints are gone from the API; their queued deliveries are dropped with them. */
export async function deleteEndpoint(trx: Executor, tenant: Tenant, id: string) {
  const row = await findEndpoint(trx, tenant, id, { forUpdate: true });
  await trx.updateTable('webhook_endpoints').set({ deleted_at: new Date(), updated_at: new Date() }).where('id', '=', row.id).execute();
  await trx.updateTable('webhook_deliveries').set({ status: 'failed', last_error: 'the endpoint was deleted' })
    .where('endpoint_id', '=', row.id).where('status', '=', 'pending').execute();
  return row;
}

/**
 * A new secret signs from now on; the previous one signs too (a second signature in the header)
 * until `expiresInHours` have passed, so no delivery is rejected while the receiver switches.
 */
export async function rotateSecret(trx: Executor, cipher: DataCipher, tenant: Tenant, id: string, expiresInHours: number) {
  const row = await findEndpoint(trx, tenant, id, { forUpdate: true });
  const secret = newSecret();
  const now = new Date();
  const updated = await trx.updateTable('webhook_endpoints').set({
    secret_encrypted: cipher.encrypt(secret),
    previous_secret_encrypted: expiresInHours > 0 ? row.secret_encrypted : null,
    previous_secret_expires_at: expiresInHours > 0 ? new Date(now.getTime() + expiresInHours * 3600_000) : null,
    updated_at: now,
  }).where('id', '=', row.id).returningAll().executeTakeFirstOrThrow();
  return { row: updated, secret };
}

/** The secrets that sign a delivery now: the current one, and the previous one inside its rotation window. */
export function signingSecrets(cipher: DataCipher, row: WebhookEndpointRow, now = new Date()): string[] {
  const secrets = [cipher.decryptText(row.secret_encrypted)];
  if (row.previous_secret_encrypted && row.previous_secret_expires_at && row.previous_secret_expires_at > now) {
    secrets.push(cipher.decryptText(row.previous_secret_encrypted));
  }
  return secrets;
}
