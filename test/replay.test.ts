
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';

Runtime.install({ logger: new DefaultLogger('WARN') });
import { business, createTenant, documents, individual, temporalClient, waitForKycStatus, type Tenant } from './harness';

// Determinism: histories recorded by the running worker must replay against the current workflow code.

let t: Tenant;
beforeAll(async () => {
  t = await createTenant();
});

async function drive(body: Record<string, unknown>, steps: (id: string) => Promise<void>) {
  const c = (await t.api.post('/v0/customers', body)).body;
  await waitForKycStatus(t.api, c.id, 'pending');
  await steps(c.id);
  const client = await temporalClient();
  await client.workflow.getHandle(`kyc:${c.id}`).result();
  return `kyc:${c.id}`;
}

test('KYC histories of every path replay without non-determinism', async () => {
  const ids = [
    await drive(individual(), async (id) => {
      await t.api.post(`/v0/customers/${id}/kyc`, documents());
    }),
    await drive(individual({ email: `kyc_incomplete.replay.${Date.now()}@example.com` }), async (id) => {
      await t.api.post(`/v0/customers/${id}/kyc`, documents());
      await waitForKycStatus(t.api, id, 'incomplete');
      await t.api.post(`/v0/customers/${id}/kyc`, documents());
    }),
    await drive(individual({ email: `kyc_manual.replay.${Date.now()}@example.com` }), async (id) => {
      await t.api.post(`/v0/customers/${id}/kyc`, documents());
      await waitForKycStatus(t.api, id, 'manual_review');
      await t.api.post(`/v0/sandbox/customers/${id}/kyc_decision`, { decision: 'reject', reasons: ['adverse_media'] });
    }),
    await drive(business(), async (id) => {
      await t.api.post(`/v0/customers/${id}/kyc`, documents());
      await waitForKycStatus(t.api, id, 'awaiting_ubo');
      await t.api.post(`/v0/customers/${id}/kyc`, {
        beneficial_owners: [{ first_name: 'Ola', last_name: 'Nordmann', date_of_birth: '1960-01-01', ownership_percentage: 100 }],
      });
    }),
    await drive(individual(), async (id) => {
      await t.api.delete(`/v0/customers/${id}`);
    }),
  ];

  const client = await temporalClient();
  const histories = ids.map(async (workflowId) => ({ workflowId, history: await client.workflow.getHandle(workflowId).fetchHistory() }));
  const results = Worker.runReplayHistories({ workflowsPath: require.resolve('../workflows') }, (async function* () {
    for (const h of histories) yield await h;
  })());
  let replayed = 0;
  for await (const result of results) {
    expect(result.error).toBeUndefined();
    replayed++;
  }
  expect(replayed).toBe(5);
});
