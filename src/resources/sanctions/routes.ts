import { z } from 'zod';
import { invalidState, notFound } from '../../api/errors';
import { paginate } from '../../api/pagination';
import { defineRoute } from '../../api/route';
import { findCustomer } from '../customers/repository';
import { ScreenInput, ScreeningListQuery, ScreeningListSchema, ScreeningSchema } from './schemas';
import { screenOrUnavailable, serializeScreening, serializeScreenings, storeScreening } from './service';

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
        const customer = await findCustomer(trx, tenant, body.customer_id);
        if (customer.status === 'deleted') throw invalidState(`Customer ${customer.id} is deleted`);
      }
      const outcome = screenOrUnavailable(deps, query);
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
    const row = await deps.db
      .selectFrom('screenings')
      .selectAll()
      .where('id', '=', params.screening_id)
      .where('developer_id', '=', tenant.developerId)
      .where('environment', '=', tenant.environment)
      .executeTakeFirst();
    if (!row) throw notFound('screening', params.screening_id);
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
    let q = deps.db
      .selectFrom('screenings')
      .selectAll()
      .where('developer_id', '=', tenant.developerId)
      .where('environment', '=', tenant.environment);
    if (query.status) q = q.where('status', '=', query.status);
    if (query.customer_id) q = q.where('customer_id', '=', query.customer_id);
    if (query.batch_id) q = q.where('batch_id', '=', query.batch_id);
    const page = await paginate(q, query, (row) => row);
    return { status: 200, body: { ...page, data: await serializeScreenings(deps.db, page.data) } };
  },
});

export const sanctionsRoutes = [screenRoute, getScreening, listScreenings];
