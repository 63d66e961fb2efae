import { findTenantRow, tenantRows } from '../../db/tenant-scope';
import { z } from 'zod';
import { objectId } from '../../ids';
import { listParams, listSchema, paginate } from '../../api/pagination';
import { defineRoute } from '../../api/route';
import type { EventRow } from '../../db/schema';

export const EventSchema = z
  .object({
    id: objectId('evt'),
    object: z.literal('event'),
    event: z.string(),
    api_version: z.literal('v0'),
    created_at: z.iso.datetime(),
    data: z.record(z.string(), z.unknown()).describe('The object after the change; previous_attributes on updates'),
  })
  .meta({ id: 'Event' });

export function serializeEvent(row: EventRow) {
  return {
    id: row.id,
    object: 'event' as const,
    event: row.type,
    api_version: 'v0' as const,
    created_at: row.created_at.toISOString(),
    data: { ...row.data, ...(row.previous_attributes ? { previous_attributes: row.previous_attributes } : {}) },
  };
}

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
  responses: { 200: EventSchema },
  handler: async ({ deps, tenant, params }) => {
    const row = await findTenantRow(deps.db, 'events', tenant, params.event_id, { what: 'event' });
    return { status: 200, body: serializeEvent(row) };
  },
});

export const eventRoutes = [listEvents, getEvent];
