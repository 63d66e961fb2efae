import { findTenantRow, tenantRows } from '../../db/tenant-scope';
import { z } from 'zod';
import { objectId } from '../../ids';
import { listParams, listSchema, paginate } from '../../api/pagination';
import { defineRoute } from '../../api/route';
import { serializeEvent } from '../../domain/events';
import { deliveriesOf, redeliver } from '../../webhooks/deliveries';
import { eventVariants } from './payloads';
import { oneOfShapes } from '../../domain/documented-variants';

export const EventSchema = z
  .object({
    id: objectId('evt'),
    object: z.literal('event'),
    event: z.string().describe('The event name, from the catalogue (docs/WEBHOOKS.md); it decides what data holds'),
    api_version: z.literal('v0'),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime().describe('An event never changes: its created_at'),
    data: z.record(z.string(), z.unknown()).describe('The object after the change; previous_attributes on updates'),
  })
  .meta({ id: 'Event', ...oneOfShapes(eventVariants()) });

const EventWithDeliveriesSchema = EventSchema.extend({
  deliveries: z.array(z.object({
    webhook_id: objectId('whk'),
    status: z.enum(['pending', 'delivered', 'failed']),
    next_attempt_at: z.iso.datetime().nullable(),
    attempts: z.array(z.object({
      attempted_at: z.iso.datetime(),
      status_code: z.number().int().nullable(),
      error: z.string().nullable().describe('A network error (timeout, refused connection, TLS); null when the endpoint answered'),
      duration_ms: z.number().int(),
    })),
  })).describe('Webhook deliveries of this event, each with its attempts'),
}).meta({ id: 'EventWithDeliveries' });

export const listEvents = defineRoute({
  method: 'get',
  path: '/v0/events',
  summary: 'List events, newest first',
  tag: 'Events',
  permission: 'unrestricted',
  query: z.strictObject({
    ...listParams,
    type: z.string().optional().describe('e.g. customer.kyc_status_changed'),
    object_id: z.string().optional(),
  }),
  responses: { 200: listSchema(EventSchema, 'Event') },
  handler: async ({ deps, tenant, query }) => {
    let q = tenantRows(deps.db, 'events', tenant);
    if (query.type) q = q.where('type', '=', query.type);
    if (query.object_id) q = q.where('object_id', '=', query.object_id);
    return { status: 200, body: await paginate(q, query, serializeEvent) };
  },
});

export const getEvent = defineRoute({
  method: 'get',
  path: '/v0/events/{event_id}',
  summary: 'Retrieve an event',
  tag: 'Events',
  permission: 'unrestricted',
  params: z.strictObject({ event_id: z.string() }),
  responses: { 200: EventWithDeliveriesSchema },
  handler: async ({ deps, tenant, params }) => {
    const row = await findTenantRow(deps.db, 'events', tenant, params.event_id, { what: 'event' });
    return { status: 200, body: { ...serializeEvent(row), deliveries: await deliveriesOf(deps.db, row.id) } };
  },
});

export const redeliverEvent = defineRoute({
  method: 'post',
  path: '/v0/events/{event_id}/redeliver',
  summary: 'Send an event again: to one webhook endpoint, or to every endpoint it went to',
  tag: 'Events',
  permission: 'unrestricted',
  params: z.strictObject({ event_id: z.string() }),
  body: z.strictObject({ webhook_id: z.string().optional().describe('Only this endpoint (even one the event never went to)') }).default({}),
  responses: { 202: EventWithDeliveriesSchema },
  handler: async ({ tenant, params, body, write }) =>
    write(async (trx) => {
      const row = await findTenantRow(trx, 'events', tenant, params.event_id, { what: 'event' });
      await redeliver(trx, tenant, row.id, body.webhook_id);
      return { status: 202, body: { ...serializeEvent(row), deliveries: await deliveriesOf(trx, row.id) } };
    }),
});

export const eventRoutes = [listEvents, getEvent, redeliverEvent];
