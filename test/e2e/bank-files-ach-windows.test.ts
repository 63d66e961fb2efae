import fs from 'node:fs';
import path from 'node:path';
import { apiClient, createTenant, stack, temporalClient, testDb, waitFor } from '../harness';
import { liveApprovedCustomer } from '../harness/live-ach';
import { moovValidate } from '../harness/moov-ach';
import { BankFileRails } from '../../src/providers/bank-files/bank-file-rails';
import { readAchFile } from '../../src/providers/bank-files/nacha';

// Payments created concurrently while their windows go out (docs/BANK_FILES.md, "Trace numbers"):
// whatever order the inserts commit in, each file's traces ascend within every batch and no trace
// repeats, as moov-io/ach (an implementation this project did not write) checks. The payments are
// queued through the bank-file rail itself, as a transfer's workflow queues them: what is under
// test is the queue and the windows, not the transfers around them.

const PAYMENTS = 1000;
const WINDOW = 'bank-files:ach_same_day';

/** `task(0)` … `task(count - 1)`, at most `clients` at a time. */
async function runConcurrently(count: number, clients: number, task: (i: number) => Promise<void>) {
  let next = 0;
  await Promise.all(Array.from({ length: clients }, async () => {
    while (next < count) await task(next++);
  }));
}

test(`${PAYMENTS} same-day ACH payments created concurrently (each asked for twice at once) across 3 windows: each in a file once, every file passes moov-io/ach, traces ascend in each batch and never repeat`, async () => {
  const tenant = await createTenant();
  const live = apiClient(tenant.liveSecret);
  const customer = await liveApprovedCustomer(live, 'bank-files-windows-test');
  const created = await live.post('/v0/external-accounts', {
    customer_id: customer.id, type: 'us_bank_account', account_name: 'Ana Lucía Peña', routing_number: '021000021', account_number: '40009990001',
  });
  expect(created.status).toBe(201);
  const rails = new BankFileRails(testDb(), { settlementSeconds: 4, recheckMs: 1_000 });
  const window = (await temporalClient()).schedule.getHandle(WINDOW);
  await window.pause('bank-files-ach-windows test: windows triggered while payments are created');
  try {
    const mine = () => testDb().selectFrom('bank_payments').select(['id', 'entry_ref', 'trace_number', 'file_id', 'status'])
      .where('developer_id', '=', tenant.developerId).where('rail', '=', 'ach_same_day').execute();
    /**
     * Triggers the window until `files` files hold our payments. A trigger in the second another
     * run of the window started is dropped by Temporal (one run per id), so it is triggered again.
     */
    const windowsGoOut = (files: number, all = false) => waitFor(async () => {
      const rows = await mine();
      const filed = new Set(rows.filter((r) => r.file_id !== null).map((r) => r.file_id)).size;
      if (filed >= files && (!all || rows.every((r) => r.file_id !== null))) return rows;
      await window.trigger();
      const statuses = rows.reduce<Record<string, number>>((n, r) => ({ ...n, [r.status]: (n[r.status] ?? 0) + 1 }), {});
      throw new Error(`${filed} files; ${JSON.stringify(statuses)}`);
    }, { what: `our payments in ${files} files`, timeoutMs: 120_000, intervalMs: 1_000 });

    // Each payment asked for twice at once, as a workflow's retried activity would: one payment, the same answer.
    const create = (from: number, to: number) => runConcurrently(to - from, 16, async (k) => {
      const request = {
        tenant: { developerId: tenant.developerId, environment: 'production' as const }, idempotencyKey: `windows-test:${tenant.developerId}:${from + k}`,
        rail: 'ach_same_day' as const, direction: 'credit' as const, amountMinor: BigInt(100 + from + k), currency: 'usd', externalAccountId: created.body.id,
        reference: `tr_windows_${from + k}`, purpose: 'payout' as const,
      };
      const [first, again] = await Promise.all([rails.submitPayment(request), rails.submitPayment(request)]);
      expect(again.id).toBe(first.id);
    });
    // 16 clients create payments while the first two windows go out; the last few, created after
    // the second, make sure of a third.
    const third = Math.floor(PAYMENTS / 3);
    await create(0, third);
    await Promise.all([windowsGoOut(1), create(third, 2 * third)]);
    await Promise.all([windowsGoOut(2), create(2 * third, PAYMENTS - 10)]);
    await create(PAYMENTS - 10, PAYMENTS);
    const filed = await windowsGoOut(3, true);
    expect(filed).toHaveLength(PAYMENTS);
    const fileIds = [...new Set(filed.map((r) => r.file_id!))];
    expect(fileIds.length).toBeGreaterThanOrEqual(3);
    const files = await testDb().selectFrom('bank_files').select(['id', 'name', 'status']).where('id', 'in', fileIds).execute();
    const uploaded = await waitFor(async () => {
      const names = files.map((f) => path.join(stack().bankRoot!, 'inbox', f.name));
      return names.every((n) => fs.existsSync(n)) ? names.map((n) => fs.readFileSync(n, 'utf8')) : undefined;
    }, { what: 'the files uploaded', timeoutMs: 60_000 });

    // moov-io/ach reads and validates each file: no error, and together they hold every payment.
    const checked = moovValidate(...uploaded);
    expect(checked.map((c) => c.error)).toEqual(files.map(() => undefined));
    expect(checked.reduce((n, c) => n + (c.entries ?? 0), 0)).toBeGreaterThanOrEqual(PAYMENTS);

    // Each payment carries the trace its entry went out with; ascending in each batch, none twice.
    const traceOf = new Map(filed.map((r) => [r.entry_ref, r.trace_number]));
    const seen = new Set<string>();
    let ours = 0;
    for (const text of uploaded) {
      for (const batch of readAchFile(text).batches) {
        const traces = batch.entries.map((e) => e.traceNumber);
        expect(traces).toEqual([...traces].sort());
        for (const e of batch.entries) {
          expect(seen.has(e.traceNumber)).toBe(false);
          seen.add(e.traceNumber);
          if (!traceOf.has(e.idNumber)) continue;
          ours++;
          expect(e.traceNumber).toBe(traceOf.get(e.idNumber));
          expect(e.individualName).toBe('ANA LUCIA PENA');
        }
      }
    }
    expect(ours).toBe(PAYMENTS);
    // No trace was ever given twice on the whole stack (every test's payments share the ODFI's counter).
    const repeated = await testDb().selectFrom('bank_payments').select('trace_number').where('trace_number', 'is not', null)
      .groupBy('trace_number').having((eb) => eb.fn.countAll(), '>', 1).execute();
    expect(repeated).toEqual([]);
    const distinct = new Set(filed.map((r) => r.trace_number));
    expect(distinct.size).toBe(PAYMENTS);
  } finally {
    if ((await window.describe()).state.paused) await window.unpause();
  }
}, 300_000);
