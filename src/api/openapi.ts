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

  const errorSchema = convert(ErrorSchema, 'output');
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
      responses[status] = { description: 'Success', content: { 'application/json': { schema: convert(schema, 'output') } } };
    }
    responses.default = { description: 'Error', content: { 'application/json': { schema: errorSchema } } };

    paths[route.path] ??= {};
    paths[route.path][route.method] = {
      operationId: `${route.method}_${route.path.replace(/^\/v0\//, '').replace(/[{}]/g, '').replace(/[^a-zA-Z0-9]+/g, '_')}`,
      summary: route.summary,
      tags: [route.tag],
      'x-permission': route.permission,
      ...(route.sandboxOnly ? { 'x-sandbox-only': true } : {}),
      security: [{ ApiKey: [] }],
      parameters: [
        ...parameters,
        ...(route.method === 'post'
          ? [{ name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', minLength: 1, maxLength: 255 } }]
          : []),
      ],
      ...(route.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: convert(route.body, 'input') } } } }
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
      responses: { '2XX': { description: 'Received: any 2xx within 10 s; anything else is retried for 3 days' } },
    },
  }]));

  return {
    openapi: '3.1.0',
    info: {
      title: 'Financial Platform API',
      version: 'v0',
      description: 'Money movement between fiat currencies, stablecoins and digital assets. Conventions: docs/API.md.',
    },
    servers: [{ url: serverUrl }],
    security: [{ ApiKey: [] }],
    paths,
    webhooks: webhookItems,
    components: {
      securitySchemes: { ApiKey: { type: 'apiKey', in: 'header', name: 'Api-Key' } },
      schemas: components,
    },
  };
}
