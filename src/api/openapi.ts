import { z } from 'zod';
import { ErrorSchema } from './errors';
import type { RouteDef } from './route';

type JsonSchema = Record<string, unknown>;

/**
 * OpenAPI 3.1 generated from the same zod schemas that validate requests, so the document can
 * never drift from the code. Named schemas (`.meta({ id })`) land in components.schemas.
 */
export function buildOpenApiDocument(
  routes: RouteDef[], serverUrl: string, webhooks: Record<string, { summary: string; payload: z.ZodType }> = {},
) {
  const components: Record<string, JsonSchema> = {};

  const convert = (schema: z.ZodType, io: 'input' | 'output'): JsonSchema => {
    const raw = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as JsonSchema;
    const json = JSON.parse(JSON.stringify(raw).replaceAll('"#/$defs/', '"#/components/schemas/')) as JsonSchema;
    const defs = (json.$defs ?? {}) as Record<string, JsonSchema>;
    delete json.$defs;
    delete json.$schema;
    for (const [name, def] of Object.entries(defs)) components[name] = def;
    return json;
  };

  convert(ErrorSchema, 'output');
  const paths: Record<string, Record<string, unknown>> = {};

  for (const route of routes) {
    const parameters: unknown[] = [];
    for (const [location, schema] of [['path', route.params], ['query', route.query]] as const) {
      if (!schema) continue;
      const json = convert(schema, 'input');
      const props = (json.properties ?? {}) as Record<string, JsonSchema>;
      const required = new Set((json.required as string[] | undefined) ?? []);
      for (const [name, prop] of Object.entries(props)) {
        parameters.push({ name, in: location, required: location === 'path' || required.has(name), schema: prop });
      }
    }
    const responses: Record<string, unknown> = {};
    for (const [status, schema] of Object.entries(route.responses)) {
      responses[status] = {
        description: 'Success',
        headers: { ...SUCCESS_HEADERS, ...(route.method === 'post' ? { 'Idempotent-Replayed': { $ref: '#/components/headers/Idempotent-Replayed' } } : {}) },
        content: { 'application/json': { schema: convert(schema, 'output') } },
      };
    }
    for (const status of errorStatuses(route)) responses[status] = { $ref: `#/components/responses/${status}` };
    responses.default = { description: DEFAULT_ERROR, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };

    paths[route.path] ??= {};
    paths[route.path][route.method] = {
      operationId: `${route.method}_${route.path.replace(/^\/v0\//, '').replace(/[{}]/g, '').replace(/[^a-zA-Z0-9]+/g, '_')}`,
      summary: route.summary,
      description: describeOperation(route),
      tags: [route.tag],
      'x-permission': route.permission,
      ...(route.sandboxOnly ? { 'x-sandbox-only': true } : {}),
      ...(route.operator ? { 'x-operator-only': true } : {}),
      security: [{ ApiKey: [] }],
      parameters: [
        ...parameters,
        ...(route.method === 'post'
          ? [{
            name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', minLength: 1, maxLength: 255 },
            description: 'Makes a retry safe: the same key and body within 24 hours replays the first answer (docs/API.md, "Idempotency")',
          }]
          : []),
      ],
      ...(route.body
        // Required only where a body must be sent: a route whose fields are all optional takes none.
        ? { requestBody: { required: !route.body.safeParse(undefined).success, content: { 'application/json': { schema: convert(route.body, 'input') } } } }
        : {}),
      responses,
    };
  }

  // What the platform sends to developers' endpoints: one entry per event, its payload the request body.
  const webhookItems = Object.fromEntries(Object.entries(webhooks).map(([name, { summary, payload }]) => [name, {
    post: {
      summary,
      operationId: `webhook_${name.replace(/[^a-zA-Z0-9]+/g, '_')}`,
      tags: ['Webhooks'],
      parameters: [
        { name: 'X-Webhook-Id', in: 'header', required: true, schema: { type: 'string' }, description: 'The event id (the deduplication key)' },
        {
          name: 'X-Webhook-Signature', in: 'header', required: true, schema: { type: 'string' },
          description: 'Lowercase hex HMAC-SHA256 of the raw body with the endpoint secret; two, comma-separated, during a secret rotation',
        },
      ],
      requestBody: { required: true, content: { 'application/json': { schema: convert(payload, 'output') } } },
      description: `${summary.replace(/\.$/, '')}. Delivered to every endpoint that enabled it, signed (docs/WEBHOOKS.md); answer 2xx within 10 s.`,
      responses: {
        '2XX': { description: 'Received: any 2xx within 10 s; anything else is retried for 3 days' },
        '4XX': { description: 'Not received: the delivery is tried again later, as for any answer other than 2xx' },
      },
    },
  }]));

  const tags = [...new Set([...routes.map((r) => r.tag), 'Webhooks'])].map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? name }));
  return {
    openapi: '3.1.0',
    info: {
      title: 'Financial Platform API',
      version: 'v0',
      description: 'Money movement between fiat currencies, stablecoins and digital assets. Conventions: docs/API.md.',
      contact: { name: 'Financial Platform API', url: `${serverUrl}/v0/openapi.json` },
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: serverUrl, description: 'This deployment' }],
    security: [{ ApiKey: [] }],
    tags,
    paths,
    webhooks: webhookItems,
    components: {
      securitySchemes: { ApiKey: { type: 'apiKey', in: 'header', name: 'Api-Key', description: 'sk_test_…/sk_live_… (secret, servers only) or pk_… (publishable, browsers)' } },
      schemas: components,
      headers: HEADERS,
      responses: ERROR_RESPONSES,
    },
  };
}

const TAG_DESCRIPTIONS: Record<string, string> = {
  Customers: 'Individuals and businesses the platform moves money for, with their KYC status and endorsements',
  KYC: 'Identity verification submissions',
  'External accounts': 'Bank accounts and crypto addresses outside the platform that money is paid to or taken from',
  Transfers: 'Money movements between rails, chains and currencies, each a durable workflow',
  Payments: 'The individual payments a transfer made on its rails and chains',
  Wallets: 'Custodial and 2-of-3 MPC wallets on the platform\'s chains',
  Accounts: 'Platform accounts that hold a customer\'s fiat balance',
  'Sanctions screening': 'Screening names and addresses against the sanctions lists',
  Events: 'The event log every webhook delivery comes from',
  Webhooks: 'Endpoints that receive the platform\'s signed events',
  Sandbox: 'Simulations of the outside world, for sandbox keys only',
  Reconciliation: 'The bank statements proved against the books each day, and the exceptions operators resolve (operator keys only)',
};

const header = (description: string, schema: JsonSchema = { type: 'string' }) => ({ description, schema });
const HEADERS: Record<string, unknown> = {
  'Request-Id': header('This request\'s id (req_…): quote it to support; it is in every log line of the request'),
  'RateLimit-Limit': header('Requests per second this key may make', { type: 'integer' }),
  'RateLimit-Remaining': header('Requests left in the current second', { type: 'integer' }),
  'RateLimit-Reset': header('Seconds until the window resets', { type: 'integer' }),
  'Idempotent-Replayed': header('"true" when this answer is the stored answer of an earlier request with the same Idempotency-Key', { type: 'string', enum: ['true'] }),
  'Retry-After': header('Seconds to wait before trying again', { type: 'integer' }),
};
const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });
const SUCCESS_HEADERS = { 'Request-Id': ref('Request-Id'), 'RateLimit-Limit': ref('RateLimit-Limit'), 'RateLimit-Remaining': ref('RateLimit-Remaining'), 'RateLimit-Reset': ref('RateLimit-Reset') };

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'invalid_request: a parameter or field is missing or wrong; `source` names it; nothing was done',
  401: 'unauthorized: no API key, or a malformed, unknown or revoked one',
  403: 'forbidden: the key may not do this (its permissions, a publishable key, or a secret key from a browser)',
  404: 'not_found: no such object for this key\'s developer account and environment, or a sandbox route called with a live key',
  409: 'invalid_state (the object\'s state does not allow it) or idempotency_key_in_use (the first request with this key still runs)',
  413: 'payload_too_large: the body is over the size limit',
  415: 'unsupported_media_type: the body is not application/json',
  422: 'idempotency_key_mismatch: this Idempotency-Key was used with another method, path or body',
  429: 'rate_limited or daily_quota_exceeded: wait Retry-After seconds',
  503: 'service_unavailable: a dependency, rail, chain or provider is unavailable; nothing was done',
};
const DEFAULT_ERROR = 'Any other error (internal_error, method_not_allowed), in the same envelope';
const ERROR_RESPONSES: Record<string, unknown> = Object.fromEntries(Object.entries(ERROR_DESCRIPTIONS).map(([status, description]) => [status, {
  description,
  headers: { ...SUCCESS_HEADERS, ...(status === '429' || status === '503' ? { 'Retry-After': ref('Retry-After') } : {}) },
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
}]));

/** The error statuses an operation can answer: what every request can meet, and what its method and body add. */
function errorStatuses(route: RouteDef): number[] {
  const writes = route.method !== 'get';
  return [400, 401, 403, 404, ...(writes ? [409] : []), ...(route.method === 'post' || route.method === 'patch' ? [413, 415] : []),
    ...(route.method === 'post' ? [422] : []), 429, 503];
}

function describeOperation(route: RouteDef): string {
  const who = route.permission === 'unrestricted' ? 'an unrestricted secret key' : `a secret key with the \`${route.permission}\` permission`;
  const only = route.sandboxOnly ? ' Sandbox keys only: live keys get 404.' : route.operator ? ' The platform operators\' keys only: any other key gets 404.' : '';
  return `${route.summary}. Needs ${who}${route.publishable ? ', or a publishable key' : ''}.${only}`;
}
