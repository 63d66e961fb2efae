import { sql } from 'kysely';
import type { Tenant } from '../../src/db/tenant-scope';
import { LedgerError, balanceOf, postTransaction, verifyLedger, type LedgerAccountRef } from '../../src/ledger/ledger';
import { createTenant, runCli, testDb } from '../harness';

// The double-entry ledger against the real PostgreSQL.

let tenant: Tenant;
const customerUsd: LedgerAccountRef = { ownerType: 'customer', ownerId: 'cus_ledger_test', purpose: 'customer_funds', currency: 'usd' };
const customerEur: LedgerAccountRef = { ...customerUsd, currency: 'eur' };
const achClearing: LedgerAccountRef = { ownerType: 'platform', ownerId: 'ach', purpose: 'rail_clearing', currency: 'usd' };
const fxUsd: LedgerAccountRef = { ownerType: 'platform', ownerId: 'fx', purpose: 'fx_conversion', currency: 'usd' };
const fxEur: LedgerAccountRef = { ownerType: 'platform', ownerId: 'fx', purpose: 'fx_conversion', currency: 'eur' };
const fees: LedgerAccountRef = { ownerType: 'platform', ownerId: 'platform', purpose: 'platform_fees', currency: 'usd' };

const post = (key: string, postings: [LedgerAccountRef, bigint][], description = 'test') =>
  testDb().transaction().execute((trx) =>
    postTransaction(trx, tenant, { idempotencyKey: `${tenant.developerId}:${key}`, description, postings: postings.map(([account, amountMinor]) => ({ account, amountMinor })) }));

beforeAll(async () => {
  const t = await createTenant();
  tenant = { developerId: t.developerId, environment: 'sandbox' };
});

test('a deposit is balanced entries; balances follow', async () => {
  const r = await post('deposit-1', [[customerUsd, 10_050n], [achClearing, -10_050n]], 'ACH deposit');
  expect(r.replayed).toBe(false);
  expect(await balanceOf(testDb(), tenant, customerUsd)).toBe(10_050n);
  expect(await balanceOf(testDb(), tenant, achClearing)).toBe(-10_050n);
});

test('the same idempotency key never posts twice', async () => {
  const first = await post('deposit-2', [[customerUsd, 1_000n], [achClearing, -1_000n]]);
  const again = await post('deposit-2', [[customerUsd, 1_000n], [achClearing, -1_000n]]);
  expect(again).toEqual({ transactionId: first.transactionId, replayed: true });
  expect(await balanceOf(testDb(), tenant, customerUsd)).toBe(11_050n);
});

test('unbalanced movements and overdrafts of customer funds are refused, and write nothing', async () => {
  await expect(post('bad-1', [[customerUsd, 500n], [achClearing, -400n]])).rejects.toMatchObject({ code: 'unbalanced' });
  await expect(post('bad-2', [[customerUsd, -1_000_000n], [achClearing, 1_000_000n]])).rejects.toBeInstanceOf(LedgerError);
  await expect(post('bad-3', [[customerUsd, 1n]])).rejects.toMatchObject({ code: 'empty' });
  const written = await testDb().selectFrom('ledger_transactions').select('id').where('idempotency_key', 'like', `${tenant.developerId}:bad-%`).execute();
  expect(written).toEqual([]);
  expect(await balanceOf(testDb(), tenant, customerUsd)).toBe(11_050n);
});

test('an FX conversion balances per currency through conversion accounts; a fee is its own leg', async () => {
  await post('fx-1', [
    [customerUsd, -10_000n], [fxUsd, 9_900n], [fees, 100n],
    [fxEur, -9_200n], [customerEur, 9_200n],
  ], 'convert 100.00 USD to 92.00 EUR, 1.00 USD fee');
  expect(await balanceOf(testDb(), tenant, customerUsd)).toBe(1_050n);
  expect(await balanceOf(testDb(), tenant, customerEur)).toBe(9_200n);
  expect(await balanceOf(testDb(), tenant, fees)).toBe(100n);
});

test('concurrent movements on the same accounts keep balances exact', async () => {
  await Promise.all(Array.from({ length: 20 }, (_, i) => post(`burst-${i}`, [[customerUsd, 10n], [achClearing, -10n]])));
  expect(await balanceOf(testDb(), tenant, customerUsd)).toBe(1_250n);
});

test('concurrent first movements of new accounts create each account once, without deadlock', async () => {
  const fresh = (id: string): LedgerAccountRef => ({ ownerType: 'customer', ownerId: id, purpose: 'customer_funds', currency: 'gbp' });
  const clearing: LedgerAccountRef = { ownerType: 'platform', ownerId: 'faster_payments', purpose: 'rail_clearing', currency: 'gbp' };
  // Ten movements racing to open the same two accounts, in both orders of their postings.
  await Promise.all(Array.from({ length: 10 }, (_, i) => post(`open-${i}`, i % 2
    ? [[fresh('cus_new_a'), 7n], [clearing, -7n]]
    : [[clearing, -7n], [fresh('cus_new_a'), 7n]])));
  expect(await balanceOf(testDb(), tenant, fresh('cus_new_a'))).toBe(70n);
  const opened = await testDb().selectFrom('ledger_accounts').select('id')
    .where('developer_id', '=', tenant.developerId).where('currency', '=', 'gbp').execute();
  expect(opened).toHaveLength(2);
});

test('entries are immutable', async () => {
  await expect(sql`update ledger_entries set amount_minor = 1 where id = (select min(id) from ledger_entries)`.execute(testDb())).rejects.toThrow(/immutable/);
  await expect(sql`delete from ledger_entries where id = (select min(id) from ledger_entries)`.execute(testDb())).rejects.toThrow(/immutable/);
});

test('verification passes, catches a drifted cached balance, and runs from the CLI', async () => {
  expect(await verifyLedger(testDb())).toMatchObject({ ok: true, problems: [] });
  const account = await testDb().selectFrom('ledger_accounts').select(['id', 'balance_minor']).where('developer_id', '=', tenant.developerId).where('purpose', '=', 'platform_fees').executeTakeFirstOrThrow();
  await testDb().updateTable('ledger_accounts').set({ balance_minor: '999' }).where('id', '=', account.id).execute();
  try {
    const broken = await verifyLedger(testDb());
    expect(broken.ok).toBe(false);
    expect(broken.problems).toEqual([`account ${account.id} caches 999 but its entries sum to ${account.balance_minor}`]);
  } finally {
    await testDb().updateTable('ledger_accounts').set({ balance_minor: account.balance_minor }).where('id', '=', account.id).execute();
  }
  const cli = runCli(['ledger', 'verify']);
  expect(cli.status).toBe(0);
  expect(cli.stdout).toContain('ledger verified');
});
