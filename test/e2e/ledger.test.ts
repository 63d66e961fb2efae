import { sql } from 'kysely';
import type { Tenant } from '../../src/db/tenant-scope';
import { LedgerError, balanceOf, postTransaction, postTransactions, verifyLedger, type LedgerAccountRef, type Movement } from '../../src/ledger/ledger';
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

describe('movements of one change, posted together', () => {
  const sgd = (ownerId: string): LedgerAccountRef => ({ ownerType: 'customer', ownerId, purpose: 'customer_funds', currency: 'sgd' });
  const clearing: LedgerAccountRef = { ownerType: 'platform', ownerId: 'sgd_rail', purpose: 'rail_clearing', currency: 'sgd' };
  const movement = (key: string, postings: [LedgerAccountRef, bigint][]): Movement => ({
    idempotencyKey: `${tenant.developerId}:${key}`, description: key, postings: postings.map(([account, amountMinor]) => ({ account, amountMinor })),
  });
  const postAll = (movements: Movement[]) => testDb().transaction().execute((trx) => postTransactions(trx, tenant, movements));
  const recorded = (keys: string[]) => testDb().selectFrom('ledger_transactions as t').innerJoin('ledger_entries as e', 'e.transaction_id', 't.id')
    .select(['t.idempotency_key', 'e.amount_minor']).where('t.idempotency_key', 'in', keys.map((k) => `${tenant.developerId}:${k}`)).orderBy('e.id').execute();

  test('new accounts, a deposit and its payout: each a transaction with its entries, the balances once each', async () => {
    await postAll([movement('sgd-in', [[sgd('cus_sgd'), 700n], [clearing, -700n]]), movement('sgd-out', [[sgd('cus_sgd'), -700n], [clearing, 700n]])]);
    expect((await recorded(['sgd-in', 'sgd-out'])).map((r) => [r.idempotency_key.split(':')[1], String(r.amount_minor)]))
      .toEqual([['sgd-in', '700'], ['sgd-in', '-700'], ['sgd-out', '-700'], ['sgd-out', '700']]);
    expect(await balanceOf(testDb(), tenant, sgd('cus_sgd'))).toBe(0n);
  });

  test('with their accounts open: written together, balances checked after all of them (a payout its deposit funds)', async () => {
    await postAll([movement('sgd-in-2', [[sgd('cus_sgd'), 300n], [clearing, -300n]]), movement('sgd-out-2', [[sgd('cus_sgd'), -250n], [clearing, 250n]])]);
    expect(await recorded(['sgd-in-2', 'sgd-out-2'])).toHaveLength(4);
    expect(await balanceOf(testDb(), tenant, sgd('cus_sgd'))).toBe(50n);
    expect(await balanceOf(testDb(), tenant, clearing)).toBe(-50n);
  });

  test('a movement recorded before is a replay: the others are posted, each once', async () => {
    const first = movement('sgd-in-3', [[sgd('cus_sgd'), 40n], [clearing, -40n]]);
    await postAll([first]);
    await postAll([first, movement('sgd-out-3', [[sgd('cus_sgd'), -90n], [clearing, 90n]])]);
    expect(await recorded(['sgd-in-3', 'sgd-out-3'])).toHaveLength(4);
    expect(await balanceOf(testDb(), tenant, sgd('cus_sgd'))).toBe(0n);
  });

  test('movements that would leave customer funds short are refused and write nothing', async () => {
    await expect(postAll([movement('sgd-out-4', [[sgd('cus_sgd'), -10n], [clearing, 10n]]), movement('sgd-in-4', [[sgd('cus_sgd'), 5n], [clearing, -5n]])]))
      .rejects.toMatchObject({ code: 'insufficient_funds' });
    expect(await recorded(['sgd-out-4', 'sgd-in-4'])).toEqual([]);
    expect(await balanceOf(testDb(), tenant, sgd('cus_sgd'))).toBe(0n);
  });
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
