import { createTenant, runCli, testDb, waitFor } from '../harness';
import { transferTestParties, waitForTransferState } from '../harness/transfers';

// A compliance freeze (docs/KYC.md, "Suspension"): through the sandbox route and the operator's CLI.

const { parties: p, achToWire, deposit } = transferTestParties();

test('a suspended customer starts nothing new; a transfer funded meanwhile is held in review, paid out once approved after the reactivation', async () => {
  const funded = (await p.t.api.post('/v0/transfers', achToWire('30.00'))).body;
  expect(funded.state).toBe('awaiting_funds');

  const suspended = await p.t.api.post(`/v0/sandbox/customers/${p.us.id}/suspend`, { reason: 'adverse media under review' });
  expect(suspended.status).toBe(200);
  expect(suspended.body).toMatchObject({ status: 'suspended', kyc_status: 'approved', suspension: { reason: 'adverse media under review' } });
  expect((await p.t.api.post(`/v0/sandbox/customers/${p.us.id}/suspend`, { reason: 'again' })).status).toBe(409);

  // Nothing new: 409 invalid_state naming the status.
  for (const [path, body] of [
    ['/v0/transfers', achToWire('31.00')],
    ['/v0/wallets', { customer_id: p.us.id, type: 'custodial', chains: ['base'] }],
    ['/v0/accounts', { customer_id: p.us.id, currency: 'usd' }],
    ['/v0/external-accounts', { customer_id: p.us.id, type: 'crypto_address', chain: 'base', address: '0x8ba1f109551bD432803012645Ac136ddd64DBA72' }],
  ] as const) {
    const res = await p.t.api.post(path, body);
    expect([path, res.status, res.body.error.code]).toEqual([path, 409, 'invalid_state']);
    expect(res.body.error.message).toMatch(/suspended/);
  }

  // Funds that arrive meanwhile are held in review with the suspension's reason, not paid out.
  await deposit(funded.id);
  const held = await waitFor(async () => {
    const x = (await p.t.api.get(`/v0/transfers/${funded.id}`)).body;
    return x.review_reasons ? x : undefined;
  }, { what: 'the transfer held in review' });
  expect(held.state).toBe('in_review');
  expect(held.review_reasons).toEqual(['customer_suspended: adverse media under review']);
  expect((await p.t.api.get(`/v0/payments?transfer_id=${funded.id}`)).body.data.map((x: any) => x.kind)).toEqual(['deposit']);

  // KYC stays as it was; the events say what happened.
  const events = (await p.t.api.get(`/v0/events?object_id=${p.us.id}`)).body.data.map((e: any) => e.event);
  expect(events).toEqual(expect.arrayContaining(['customer.suspended', 'customer.updated']));

  const reactivated = await p.t.api.post(`/v0/sandbox/customers/${p.us.id}/reactivate`);
  expect(reactivated.body).toMatchObject({ status: 'active', kyc_status: 'approved', suspension: null });
  expect((await p.t.api.post(`/v0/sandbox/customers/${p.us.id}/reactivate`)).status).toBe(409);
  expect((await p.t.api.get(`/v0/events?object_id=${p.us.id}&type=customer.reactivated`)).body.data).toHaveLength(1);
  // The held transfer waits for an operator's decision; approved, it pays out.
  expect((await p.t.api.post(`/v0/sandbox/transfers/${funded.id}/review`, { decision: 'approve' })).status).toBe(200);
  await waitForTransferState(p.t.api, funded.id, 'payment_processed');
  expect((await p.t.api.post('/v0/transfers', achToWire('32.00'))).status).toBe(201);
});

test("the operator's CLI suspends and reactivates, keeping who did it; another tenant's key cannot", async () => {
  const out = runCli(['customers', 'suspend', p.us.id, '--reason', 'court order 2026-118', '--operator', 'ana.compliance']);
  expect([out.status, out.stderr]).toEqual([0, expect.anything()]);
  expect(out.stdout).toContain(`${p.us.id}: suspended (court order 2026-118) by ana.compliance`);
  const row = await testDb().selectFrom('customers').select(['status', 'suspension']).where('id', '=', p.us.id).executeTakeFirstOrThrow();
  expect(row).toMatchObject({ status: 'suspended', suspension: { reason: 'court order 2026-118', operator: 'ana.compliance', previous_status: 'active' } });
  // The operator is kept for audit, not returned.
  const customer = (await p.t.api.get(`/v0/customers/${p.us.id}`)).body;
  expect(customer.suspension).toEqual({ reason: 'court order 2026-118', suspended_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
  expect(JSON.stringify(customer)).not.toContain('ana.compliance');
  expect(runCli(['customers', 'suspend', p.us.id]).stderr).toMatch(/--reason is required/);

  const other = await createTenant();
  expect((await other.api.post(`/v0/sandbox/customers/${p.us.id}/reactivate`)).status).toBe(404);

  const back = runCli(['customers', 'reactivate', p.us.id, '--operator', 'ana.compliance']);
  expect(back.stdout).toContain(`${p.us.id}: active again`);
  expect((await p.t.api.get(`/v0/customers/${p.us.id}`)).body).toMatchObject({ status: 'active', suspension: null });
});
