import { WorkflowNotFoundError } from '@temporalio/client';
import { apiClient, business, createTenant, documents, individual, pngBytes, pngDataUri, temporalClient, testDb, waitForKycStatus, type Tenant } from '../harness';

let t: Tenant;
beforeAll(async () => {
  t = await createTenant();
});

async function newCustomer(body: Record<string, unknown>) {
  const res = await t.api.post('/v0/customers', body);
  expect(res.status).toBe(201);
  expect(res.body.kyc_status).toBe('not_started');
  return res.body;
}

async function kycHistory(customerId: string) {
  const events = await t.api.get(`/v0/events?object_id=${customerId}&type=customer.kyc_status_changed&limit=100`);
  return events.body.data.reverse().map((e: any) => `${e.data.previous_attributes.kyc_status}→${e.data.kyc_status}`);
}

describe('KYC workflow', () => {
  test('approval: pending → under_review → approved, with endorsements for a US individual', async () => {
    const c = await newCustomer(individual());
    const submit = await t.api.post(`/v0/customers/${c.id}/kyc`, documents());
    expect(submit.status).toBe(202);
    expect(submit.body.kyc_status).toBe('under_review');
    const approved = await waitForKycStatus(t.api, c.id, 'approved');
    expect(approved).toMatchObject({ status: 'active', risk_rating: 'low' });
    expect(approved.endorsements).toEqual([
      'can_ach_transfer', 'can_hold_custody', 'can_swift_transfer', 'can_trade_stablecoins', 'can_use_mpc', 'can_wire_transfer',
    ]);
    expect(await kycHistory(c.id)).toEqual(['not_started→pending', 'pending→under_review', 'under_review→approved']);
    const approvedEvents = await t.api.get(`/v0/events?object_id=${c.id}&type=customer.kyc_approved`);
    expect(approvedEvents.body.data).toHaveLength(1);

    // Documents are stored encrypted.
    const sub = await testDb().selectFrom('kyc_submissions').selectAll().where('customer_id', '=', c.id).executeTakeFirstOrThrow();
    expect(sub.document_front_encrypted).toMatch(/^v2:[0-9a-f]{8}:/);
    expect(sub.document_front_encrypted).not.toContain(pngBytes().toString('base64').slice(0, 40));

    // The workflow is findable in Temporal by its search attributes.
    const client = await temporalClient();
    const description = await client.workflow.getHandle(`kyc:${c.id}`).describe();
    expect(description.status.name).toBe('COMPLETED');
    expect(description.searchAttributes.CustomerId).toEqual([c.id]);
    expect(description.searchAttributes.KycStatus).toEqual(['approved']);
  });

  test('a second submission after approval is 409', async () => {
    const c = await newCustomer(individual());
    await t.api.post(`/v0/customers/${c.id}/kyc`, documents());
    await waitForKycStatus(t.api, c.id, 'approved');
    const again = await t.api.post(`/v0/customers/${c.id}/kyc`, documents());
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'invalid_state', message: expect.stringContaining('approved') });
  });

  test('SEPA endorsement for a customer in the EEA, no ACH', async () => {
    const c = await newCustomer(individual({ address: { line1: 'Calle Mayor 1', city: 'Madrid', country: 'ES' }, phone: '+34912345678' }));
    await t.api.post(`/v0/customers/${c.id}/kyc`, documents());
    const approved = await waitForKycStatus(t.api, c.id, 'approved');
    expect(approved.endorsements).toContain('can_sepa_transfer');
    expect(approved.endorsements).not.toContain('can_ach_transfer');
  });

  test('incomplete (magic value) → resubmit → approved', async () => {
    const c = await newCustomer(individual({ email: `kyc_incomplete.${Date.now()}@example.com` }));
    await t.api.post(`/v0/customers/${c.id}/kyc`, documents());
    const incomplete = await waitForKycStatus(t.api, c.id, 'incomplete');
    expect(incomplete.incomplete_reasons).toEqual(['document_unreadable']);
    expect((await t.api.post(`/v0/customers/${c.id}/kyc`, documents())).status).toBe(202);
    await waitForKycStatus(t.api, c.id, 'approved');
    expect(await kycHistory(c.id)).toEqual([
      'not_started→pending', 'pending→under_review', 'under_review→incomplete', 'incomplete→under_review', 'under_review→approved',
    ]);
  });

  test('missing data makes KYC incomplete until the customer is completed', async () => {
    const c = await newCustomer(individual({ date_of_birth: undefined }));
    await t.api.post(`/v0/customers/${c.id}/kyc`, documents());
    const incomplete = await waitForKycStatus(t.api, c.id, 'incomplete');
    expect(incomplete.incomplete_reasons).toEqual(['date_of_birth_missing']);
    expect((await t.api.patch(`/v0/customers/${c.id}`, { date_of_birth: '1985-07-01' })).status).toBe(200);
    await t.api.post(`/v0/customers/${c.id}/kyc`, documents());
    await waitForKycStatus(t.api, c.id, 'approved');
  });

  test('manual review waits for the operator: approve', async () => {
    const c = await newCustomer(individual({ email: `kyc_manual.${Date.now()}@example.com` }));
    await t.api.post(`/v0/customers/${c.id}/kyc`, documents());
    await waitForKycStatus(t.api, c.id, 'manual_review');
    const decided = await t.api.post(`/v0/sandbox/customers/${c.id}/kyc_decision`, { decision: 'approve' });
    expect(decided.status).toBe(200);
    expect(decided.body).toMatchObject({ kyc_status: 'approved', status: 'active', risk_rating: 'medium' });
    const again = await t.api.post(`/v0/sandbox/customers/${c.id}/kyc_decision`, { decision: 'reject' });
    expect(again.status).toBe(409);
  });

  test('manual review: reject with reasons', async () => {
    const c = await newCustomer(individual({ email: `kyc_manual.r.${Date.now()}@example.com` }));
    await t.api.post(`/v0/customers/${c.id}/kyc`, documents());
    await waitForKycStatus(t.api, c.id, 'manual_review');
    const decided = await t.api.post(`/v0/sandbox/customers/${c.id}/kyc_decision`, { decision: 'reject', reasons: ['adverse_media'] });
    expect(decided.body).toMatchObject({ kyc_status: 'rejected', rejection_reasons: ['adverse_media'], status: 'pending', endorsements: [] });
    const row = await testDb().selectFrom('customers').select('kyc_decision').where('id', '=', c.id).executeTakeFirstOrThrow();
    expect(row.kyc_decision).toMatchObject({ decision: 'reject', reasons: ['adverse_media'], operator: expect.stringMatching(/^sandbox:key_/) });
  });

  test('a decision when nothing waits for one is 409; unknown decision 400', async () => {
    const c = await newCustomer(individual());
    expect((await t.api.post(`/v0/sandbox/customers/${c.id}/kyc_decision`, { decision: 'approve' })).status).toBe(409);
    expect((await t.api.post(`/v0/sandbox/customers/${c.id}/kyc_decision`, { decision: 'maybe' })).status).toBe(400);
  });

  test('rejection (magic value) carries rejection_reasons', async () => {
    const c = await newCustomer(individual({ email: `kyc_reject.${Date.now()}@example.com` }));
    await t.api.post(`/v0/customers/${c.id}/kyc`, documents());
    const rejected = await waitForKycStatus(t.api, c.id, 'rejected');
    expect(rejected).toMatchObject({ rejection_reasons: ['identity_document_invalid'], risk_rating: 'high', status: 'pending' });
  });

  test('a business waits in awaiting_ubo until beneficial owners are supplied', async () => {
    const c = await newCustomer(business());
    await t.api.post(`/v0/customers/${c.id}/kyc`, documents());
    const waiting = await waitForKycStatus(t.api, c.id, 'awaiting_ubo');
    expect(waiting.endorsements).toEqual([]);
    const owners = await t.api.post(`/v0/customers/${c.id}/kyc`, {
      beneficial_owners: [{ first_name: 'Greta', last_name: 'Berg', date_of_birth: '1970-03-04', ownership_percentage: 60 }],
    });
    expect(owners.status).toBe(202);
    const approved = await waitForKycStatus(t.api, c.id, 'approved');
    expect(approved.endorsements).toContain('can_sepa_transfer');
    expect(await kycHistory(c.id)).toEqual([
      'not_started→pending', 'pending→under_review', 'under_review→awaiting_ubo', 'awaiting_ubo→under_review', 'under_review→approved',
    ]);
    const stored = await testDb().selectFrom('kyc_submissions').select('beneficial_owners_encrypted').where('customer_id', '=', c.id).execute();
    expect(stored.some((s) => s.beneficial_owners_encrypted?.startsWith('v2:'))).toBe(true);
    expect(JSON.stringify(stored)).not.toContain('Greta');
  });

  test('individuals cannot send beneficial owners; owners must hold 25% or more', async () => {
    const c = await newCustomer(individual());
    const ind = await t.api.post(`/v0/customers/${c.id}/kyc`, {
      ...documents(), beneficial_owners: [{ first_name: 'A', last_name: 'B', date_of_birth: '1970-01-01', ownership_percentage: 50 }],
    });
    expect(ind.body.error.source).toEqual({ location: 'body', key: 'beneficial_owners' });
    const b = await newCustomer(business());
    const small = await t.api.post(`/v0/customers/${b.id}/kyc`, {
      ...documents(), beneficial_owners: [{ first_name: 'A', last_name: 'B', date_of_birth: '1970-01-01', ownership_percentage: 10 }],
    });
    expect(small.body.error.source).toEqual({ location: 'body', key: 'beneficial_owners.0.ownership_percentage' });
  });

  test('bad images are 400 naming the field, and change nothing', async () => {
    const c = await newCustomer(individual());
    const cases: [Record<string, string>, string, RegExp][] = [
      [{ document_front: 'not a data uri' }, 'document_front', /base64 data URI/],
      [{ selfie: `data:image/png;base64,${Buffer.from('GIF89a' + 'x'.repeat(100)).toString('base64')}` }, 'selfie', /not a JPEG, PNG or WebP/],
      [{ document_front: `data:image/jpeg;base64,${pngBytes().toString('base64')}` }, 'document_front', /declared image\/jpeg but contains image\/png/],
      [{ document_front: 'data:image/gif;base64,R0lGODlh' }, 'document_front', /JPEG, PNG or WebP/],
      [{ selfie: pngDataUri(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) }, 'selfie', /too small/],
      [{ document_type: 'library_card' }, 'document_type', /Invalid 'document_type'/],
    ];
    for (const [override, key, message] of cases) {
      const res = await t.api.post(`/v0/customers/${c.id}/kyc`, { ...documents(), ...override });
      expect(res.status).toBe(400);
      expect(res.body.error.source).toEqual({ location: 'body', key });
      expect(res.body.error.message).toMatch(message);
    }
    const big = Buffer.concat([pngBytes(), Buffer.alloc(5 * 1024 * 1024)]);
    const tooLarge = await t.api.post(`/v0/customers/${c.id}/kyc`, { ...documents(), document_front: pngDataUri(big) });
    expect(tooLarge.status).toBe(400);
    expect(tooLarge.body.error.message).toMatch(/larger than 5 MB/);
    expect((await t.api.get(`/v0/customers/${c.id}`)).body.kyc_status).toBe('not_started');
    const stored = await testDb().selectFrom('kyc_submissions').select('id').where('customer_id', '=', c.id).execute();
    expect(stored).toHaveLength(0);
  });

  test('a publishable key can submit documents (browser and mobile SDKs)', async () => {
    const c = await newCustomer(individual());
    const res = await apiClient(t.publishable).post(`/v0/customers/${c.id}/kyc`, documents());
    expect(res.status).toBe(202);
    await waitForKycStatus(t.api, c.id, 'approved');
  });

  test('a submission replayed with its Idempotency-Key is handed over once', async () => {
    const c = await newCustomer(individual({ email: `kyc_incomplete.idem.${Date.now()}@example.com` }));
    const body = documents();
    const first = await t.api.post(`/v0/customers/${c.id}/kyc`, body, { idempotencyKey: `kyc-${c.id}` });
    const second = await t.api.post(`/v0/customers/${c.id}/kyc`, body, { idempotencyKey: `kyc-${c.id}` });
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body).toEqual(first.body);
    await waitForKycStatus(t.api, c.id, 'incomplete');
    const stored = await testDb().selectFrom('kyc_submissions').select('id').where('customer_id', '=', c.id).execute();
    expect(stored).toHaveLength(1);
  });

  test('creating a customer starts no workflow: KYC starts with the first submission', async () => {
    const c = await newCustomer(individual());
    const client = await temporalClient();
    await expect(client.workflow.getHandle(`kyc:${c.id}`).describe()).rejects.toThrow(WorkflowNotFoundError);
    expect((await t.api.post(`/v0/customers/${c.id}/kyc`, documents())).body.kyc_status).toBe('under_review');
    expect((await client.workflow.getHandle(`kyc:${c.id}`).describe()).status.name).toMatch(/RUNNING|COMPLETED/);
    await waitForKycStatus(t.api, c.id, 'approved');
  });

  test('deleting a customer ends its KYC workflow (and one who never submitted has none to end)', async () => {
    const c = await newCustomer(individual({ email: `kyc_incomplete.delete.${Date.now()}@example.com` }));
    await t.api.post(`/v0/customers/${c.id}/kyc`, documents());
    await waitForKycStatus(t.api, c.id, 'incomplete');
    expect((await t.api.delete(`/v0/customers/${c.id}`)).status).toBe(200);
    const client = await temporalClient();
    const result = await client.workflow.getHandle(`kyc:${c.id}`).result();
    expect(result).toBe('closed');
    const never = await newCustomer(individual());
    expect((await t.api.delete(`/v0/customers/${never.id}`)).status).toBe(200);
    await expect(client.workflow.getHandle(`kyc:${never.id}`).describe()).rejects.toThrow(WorkflowNotFoundError);
  });
});

describe('KYC sanctions screening', () => {
  test('a customer whose name is listed goes to manual review with the screening attached; the operator decides', async () => {
    const c = await newCustomer(individual({
      first_name: 'Ayman', last_name: 'al-Zawahiri', date_of_birth: '1951-06-19',
      address: { line1: '1 Nile St', city: 'Giza', country: 'EG' }, phone: '+20223456789',
    }));
    await t.api.post(`/v0/customers/${c.id}/kyc`, documents());
    const review = await waitForKycStatus(t.api, c.id, 'manual_review');
    expect(review.review_reasons).toEqual(['sanctions_potential_match']);
    const screenings = await t.api.get(`/v0/sanctions/screenings?customer_id=${c.id}`);
    expect(screenings.body.data).toHaveLength(1);
    expect(screenings.body.data[0]).toMatchObject({ status: 'potential_match', customer_id: c.id });
    expect(screenings.body.data[0].matches[0].matched_name).toMatch(/ZAWAHIRI/i);
    const client = await temporalClient();
    const description = await client.workflow.getHandle(`kyc:${c.id}`).describe();
    expect(description.searchAttributes.KycStatus).toEqual(['manual_review']);
    const rejected = await t.api.post(`/v0/sandbox/customers/${c.id}/kyc_decision`, { decision: 'reject', reasons: ['sanctions_confirmed'] });
    expect(rejected.body).toMatchObject({ kyc_status: 'rejected', rejection_reasons: ['sanctions_confirmed'] });
  });

  test('every approved customer was screened clear', async () => {
    const c = await newCustomer(individual());
    await t.api.post(`/v0/customers/${c.id}/kyc`, documents());
    await waitForKycStatus(t.api, c.id, 'approved');
    const screenings = await t.api.get(`/v0/sanctions/screenings?customer_id=${c.id}`);
    expect(screenings.body.data.map((s: any) => s.status)).toEqual(['clear']);
  });
});
