import { z } from 'zod';
import { listParams, listSchema, paginate } from '../../api/pagination';
import { defineRoute } from '../../api/route';
import type { Db } from '../../db';
import { tenantRows, type Tenant } from '../../db/tenant-scope';
import { invalidState, notFound } from '../../errors';
import {
  findMpcSession, MpcRoundSubmissionSchema, MpcSessionSchema, MpcSessionSummarySchema, serializeMpcSession, serializeMpcSessionSummary,
} from '../../mpc/sessions';
import { submitCustomerRound } from '../../mpc/workflow-client';
import { findWallet } from '../../wallets/wallet';

// The MPC protocol over the API (docs/MPC.md): the customer's signer reads a session (the platform's
// session key, its messages so far, what a signing signs) and posts its rounds.

const TAG = 'Wallets';
const SessionParams = z.strictObject({ wallet_id: z.string(), session_id: z.string() });

export const listMpcSessions = defineRoute({
  method: 'get',
  path: '/v0/wallets/{wallet_id}/mpc_sessions',
  summary: "The MPC wallet's protocol sessions (key generation, signing requests), newest first, without their messages (retrieve a session for them)",
  tag: TAG,
  permission: 'accounts:read',
  params: z.strictObject({ wallet_id: z.string() }),
  query: z.strictObject({
    ...listParams,
    status: z.enum(['awaiting_customer', 'completed', 'failed', 'expired', 'canceled']).optional(),
    kind: z.enum(['key_generation', 'signing']).optional(),
  }),
  responses: { 200: listSchema(MpcSessionSummarySchema, 'MpcSessionSummary') },
  handler: async ({ deps, tenant, params, query }) => {
    const wallet = await findWallet(deps.db, tenant, params.wallet_id);
    let q = tenantRows(deps.db, 'mpc_sessions', tenant).where('wallet_id', '=', wallet.id);
    if (query.status) q = q.where('status', '=', query.status);
    if (query.kind) q = q.where('kind', '=', query.kind);
    const page = await paginate(q, query, (row) => row);
    return { status: 200, body: { ...page, data: await Promise.all(page.data.map((row) => serializeMpcSessionSummary(deps.db, row))) } };
  },
});

/** The session, if it is one of this wallet's (of the key's tenant): a 404 otherwise. */
async function sessionOfWallet(deps: { db: Db }, tenant: Tenant, params: z.infer<typeof SessionParams>) {
  const session = await findMpcSession(deps.db, tenant, params.session_id);
  if (session.wallet_id !== params.wallet_id) throw notFound('MPC session', params.session_id);
  return session;
}

export const getMpcSession = defineRoute({
  method: 'get',
  path: '/v0/wallets/{wallet_id}/mpc_sessions/{session_id}',
  summary: 'Retrieve an MPC session: the platform\'s session key and messages so far, and what a signing signs',
  tag: TAG,
  permission: 'accounts:read',
  params: SessionParams,
  responses: { 200: MpcSessionSchema },
  handler: async ({ deps, tenant, params }) => ({ status: 200, body: await serializeMpcSession(deps.db, await sessionOfWallet(deps, tenant, params)) }),
});

export const postMpcMessages = defineRoute({
  method: 'post',
  path: '/v0/wallets/{wallet_id}/mpc_sessions/{session_id}/messages',
  summary: "Send the customer's round of an MPC session; answers the session with the platform's next messages",
  tag: TAG,
  permission: 'accounts:write',
  params: SessionParams,
  body: MpcRoundSubmissionSchema,
  responses: { 200: MpcSessionSchema },
  handler: async ({ deps, tenant, params, body }) => {
    const session = await sessionOfWallet(deps, tenant, params);
    // A round answered already (its answer lost on the way) is answered again from the database.
    if (body.round > session.rounds_done) {
      if (session.status !== 'awaiting_customer') throw invalidState(`Session ${session.id} is ${session.status}`);
      await submitCustomerRound(deps, session.id, body);
    }
    return { status: 200, body: await serializeMpcSession(deps.db, await findMpcSession(deps.db, tenant, session.id)) };
  },
});
