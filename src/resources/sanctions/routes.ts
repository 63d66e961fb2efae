import { findTenantRow, tenantRows } from '../../db/tenant-scope';
import { z } from 'zod';
import { paginate } from '../../api/pagination';
import { defineRoute } from '../../api/route';
import { assertCustomerNotDeleted, findCustomer } from '../../customers/customer';
import { ApiError } from '../../errors';
import { newId } from '../../ids';
import type { ScreeningBatchRow } from '../../db/schema';
import { BatchInput, ScreenInput, ScreeningBatchSchema, ScreeningListQuery, ScreeningListSchema } from './schemas';
import { ScreeningSchema, screenOrUnavailable, serializeScreening, serializeScreenings, storeScreening } from '../../sanctions/screenings';
import type { screeningBatchWorkflow } from '../../../workflows/screening-batch';

const TAG = 'Sanctions screening';

export const screenRoute = defineRoute({
  method: 'post',
  path: '/v0/sanctions/screen',
  summary: 'Screen a name against every loaded sanctions list',
  tag: TAG,
  permission: 'customers:write',
  body: ScreenInput,
  responses: { 200: ScreeningSchema },
  handler: async ({ deps, tenant, body, write }) => {
    const query = { name: body.name, type: body.type, dateOfBirth: body.date_of_birth, country: body.country };
    return write(async (trx) => {
      if (body.customer_id) {
        assertCustomerNotDeleted(await findCustomer(trx, tenant, body.customer_id));
      }
      const outcome = screenOrUnavailable(deps, query, tenant.environment);
      const row = await storeScreening(trx, deps, tenant, query, outcome, { customerId: body.customer_id });
      return { status: 200, body: await serializeScreening(trx, row) };
    });
  },
});

export const getScreening = defineRoute({
  method: 'get',
  path: '/v0/sanctions/screenings/{screening_id}',
  summary: 'Retrieve a screening',
  tag: TAG,
  permission: 'customers:read',
  params: z.strictObject({ screening_id: z.string() }),
  responses: { 200: ScreeningSchema },
  handler: async ({ deps, tenant, params }) => {
    const row = await findTenantRow(deps.db, 'screenings', tenant, params.screening_id, { what: 'screening' });
    return { status: 200, body: await serializeScreening(deps.db, row) };
  },
});

export const listScreenings = defineRoute({
  method: 'get',
  path: '/v0/sanctions/screenings',
  summary: 'List screenings, newest first',
  tag: TAG,
  permission: 'customers:read',
  query: ScreeningListQuery,
  responses: { 200: ScreeningListSchema },
  handler: async ({ deps, tenant, query }) => {
    let q = tenantRows(deps.db, 'screenings', tenant);
    if (query.status) q = q.where('status', '=', query.status);
    if (query.customer_id) q = q.where('customer_id', '=', query.customer_id);
    if (query.batch_id) q = q.where('batch_id', '=', query.batch_id);
    const page = await paginate(q, query, (row) => row);
    return { status: 200, body: { ...page, data: await serializeScreenings(deps.db, page.data) } };
  },
});

/** Entities per activity: large enough to amortise the database round trips, small enough to retry. */
const BATCH_CHUNK = 1000;

function serializeBatch(row: ScreeningBatchRow) {
  return {
    id: row.id,
    object: 'screening_batch' as const,
    status: row.status,
    total: row.total,
    processed: row.processed,
    potential_matches: row.potential_matches,
    progress: row.total === 0 ? 1 : Math.round((row.processed / row.total) * 1000) / 1000,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    completed_at: row.completed_at?.toISOString() ?? null,
  };
}

export const createBatch = defineRoute({
  method: 'post',
  path: '/v0/sanctions/screen/batch',
  summary: 'Screen up to 10,000 entities as a durable batch (202; poll the batch for progress)',
  tag: TAG,
  permission: 'customers:write',
  body: BatchInput,
  responses: { 202: ScreeningBatchSchema },
  handler: async ({ deps, tenant, body, write }) => {
    if (!deps.sanctions.readyFor(tenant.environment)) {
      throw new ApiError('service_unavailable', `${deps.sanctions.unavailableReason(tenant.environment)}; nothing was done`);
    }
    const now = new Date();
    const id = newId('screeningBatch', now.getTime());
    return write(async (trx) => {
      const row = await trx
        .insertInto('screening_batches')
        .values({
          id,
          developer_id: tenant.developerId,
          environment: tenant.environment,
          status: 'processing',
          total: body.entities.length,
          processed: 0,
          potential_matches: 0,
          entities_encrypted: deps.cipher.encrypt(JSON.stringify(body.entities)),
          created_at: now,
          updated_at: now,
          completed_at: null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      await deps.temporal.workflow.start<typeof screeningBatchWorkflow>('screeningBatchWorkflow', {
        workflowId: `screening-batch:${id}`,
        taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
        args: [{ batchId: id, total: body.entities.length, chunkSize: BATCH_CHUNK, parallelChunks: 2 }],
        staticSummary: `Sanctions screening batch ${id}: ${body.entities.length} entities`,
      });
      return { status: 202, body: serializeBatch(row) };
    });
  },
});

export const getBatch = defineRoute({
  method: 'get',
  path: '/v0/sanctions/screen/batch/{batch_id}',
  summary: 'A screening batch: progress, and when completed its screenings page by page',
  tag: TAG,
  permission: 'customers:read',
  params: z.strictObject({ batch_id: z.string() }),
  query: z.strictObject({ limit: z.coerce.number().int().min(1).max(100).default(100), cursor: z.string().regex(/^cur_\d{1,9}$/, 'use the cursor of the previous page').optional() }),
  responses: { 200: ScreeningBatchSchema },
  handler: async ({ deps, tenant, params, query }) => {
    const row = await findTenantRow(deps.db, 'screening_batches', tenant, params.batch_id, { what: 'screening batch' });
    const body: Record<string, unknown> = serializeBatch(row);
    if (row.status === 'completed') {
      // In batch order: the cursor is the index after the last one shown.
      const from = query.cursor ? Number(query.cursor.slice(4)) : 0;
      const rows = await deps.db
        .selectFrom('screenings')
        .selectAll()
        .where('batch_id', '=', row.id)
        .where('batch_index', '>=', from)
        .orderBy('batch_index')
        .limit(query.limit + 1)
        .execute();
      const page = rows.slice(0, query.limit);
      const hasMore = rows.length > query.limit;
      body.screenings = {
        object: 'list',
        data: await serializeScreenings(deps.db, page),
        has_more: hasMore,
        ...(hasMore ? { cursor: `cur_${page[page.length - 1].batch_index! + 1}` } : {}),
      };
    }
    return { status: 200, body };
  },
});

export const sanctionsRoutes = [screenRoute, getScreening, listScreenings, createBatch, getBatch];
