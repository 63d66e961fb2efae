import { z } from 'zod';
import { listParams, listSchema, paginate } from '../../api/pagination';
import { defineRoute } from '../../api/route';
import { objectId } from '../../ids';
import { queueTestEvent } from '../../webhooks/deliveries';
import {
  createEndpoint, deleteEndpoint, findEndpoint, rotateSecret, serializeEndpoint, tenantEndpoints, updateEndpoint,
  WebhookEndpointCreate, WebhookEndpointSchema, WebhookEndpointUpdate, WebhookEndpointWithSecretSchema,
} from '../../webhooks/endpoints';
import { startWebhookEndpointWorkflow } from '../../webhooks/workflow-client';

const TAG = 'Webhooks';
const WebhookIdParams = z.strictObject({ webhook_id: z.string() });

export const createWebhook = defineRoute({
  method: 'post',
  path: '/v0/webhooks',
  summary: 'Register a webhook endpoint; its signing secret is shown once',
  tag: TAG,
  permission: 'unrestricted',
  body: WebhookEndpointCreate,
  responses: { 201: WebhookEndpointWithSecretSchema },
  handler: async ({ deps, tenant, body, write }) =>
    write(async (trx) => {
      const { row, secret } = await createEndpoint(trx, deps.cipher, tenant, body);
      // In the transaction: the endpoint exists only if its delivery loop does.
      await startWebhookEndpointWorkflow(deps, row.id);
      return { status: 201, body: { ...serializeEndpoint(row), secret } };
    }),
});

export const listWebhooks = defineRoute({
  method: 'get',
  path: '/v0/webhooks',
  summary: 'List webhook endpoints, newest first',
  tag: TAG,
  permission: 'unrestricted',
  query: z.strictObject({ ...listParams }),
  responses: { 200: listSchema(WebhookEndpointSchema, 'WebhookEndpoint') },
  handler: async ({ deps, tenant, query }) => ({ status: 200, body: await paginate(tenantEndpoints(deps.db, tenant), query, serializeEndpoint) }),
});

export const getWebhook = defineRoute({
  method: 'get',
  path: '/v0/webhooks/{webhook_id}',
  summary: 'Retrieve a webhook endpoint',
  tag: TAG,
  permission: 'unrestricted',
  params: WebhookIdParams,
  responses: { 200: WebhookEndpointSchema },
  handler: async ({ deps, tenant, params }) => ({ status: 200, body: serializeEndpoint(await findEndpoint(deps.db, tenant, params.webhook_id)) }),
});

export const updateWebhook = defineRoute({
  method: 'patch',
  path: '/v0/webhooks/{webhook_id}',
  summary: 'Change a webhook endpoint: url, enabled_events, description, or disable and enable it',
  tag: TAG,
  permission: 'unrestricted',
  params: WebhookIdParams,
  body: WebhookEndpointUpdate,
  responses: { 200: WebhookEndpointSchema },
  handler: async ({ tenant, params, body, write }) =>
    write(async (trx) => ({ status: 200, body: serializeEndpoint(await updateEndpoint(trx, tenant, params.webhook_id, body)) })),
});

export const deleteWebhook = defineRoute({
  method: 'delete',
  path: '/v0/webhooks/{webhook_id}',
  summary: 'Delete a webhook endpoint: nothing more is sent to it',
  tag: TAG,
  permission: 'unrestricted',
  params: WebhookIdParams,
  responses: { 200: z.object({ id: objectId('whk'), object: z.literal('webhook_endpoint'), deleted: z.literal(true) }) },
  handler: async ({ tenant, params, write }) =>
    write(async (trx) => {
      const row = await deleteEndpoint(trx, tenant, params.webhook_id);
      return { status: 200, body: { id: row.id, object: 'webhook_endpoint' as const, deleted: true as const } };
    }),
});

export const rotateWebhookSecret = defineRoute({
  method: 'post',
  path: '/v0/webhooks/{webhook_id}/rotate_secret',
  summary: 'Replace the signing secret; the previous one also signs until expires_in_hours have passed',
  tag: TAG,
  permission: 'unrestricted',
  params: WebhookIdParams,
  body: z.strictObject({
    expires_in_hours: z.number().min(0).max(168).default(24).describe('How long the previous secret still signs (0: not at all)'),
  }).default({ expires_in_hours: 24 }),
  responses: { 200: WebhookEndpointWithSecretSchema },
  handler: async ({ deps, tenant, params, body, write }) =>
    write(async (trx) => {
      const { row, secret } = await rotateSecret(trx, deps.cipher, tenant, params.webhook_id, body.expires_in_hours);
      return { status: 200, body: { ...serializeEndpoint(row), secret } };
    }),
});

export const testWebhook = defineRoute({
  method: 'post',
  path: '/v0/webhooks/{webhook_id}/test',
  summary: 'Send a webhook.test event to this endpoint',
  tag: TAG,
  permission: 'unrestricted',
  params: WebhookIdParams,
  responses: { 202: WebhookEndpointSchema },
  handler: async ({ tenant, params, write }) =>
    write(async (trx) => {
      const row = await findEndpoint(trx, tenant, params.webhook_id);
      await queueTestEvent(trx, tenant, row.id);
      return { status: 202, body: serializeEndpoint(row) };
    }),
});

export const webhookRoutes = [createWebhook, listWebhooks, getWebhook, updateWebhook, deleteWebhook, rotateWebhookSecret, testWebhook];
