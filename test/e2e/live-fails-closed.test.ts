import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { encodeChainAddress } from '../../src/domain/bank-validation';
import { FIAT_RAILS, RAILS, SIMULATED_CHAINS, type PaymentRail, type SimulatedChain } from '../../src/domain/rails';
import { apiClient, createTenant, documents, individual, runCli, testDb, waitForKycStatus, type ApiClient, type Tenant } from '../harness';
import { freshReceiver, fundedCustomerWallet, RECEIVER, tokenBalance, waitForTransferState } from '../harness/transfers';
import { apiAndWorkerOfTheirOwn } from '../harness/own-processes';

// Live keys never reach a simulator (docs/OPERATIONS.md, "Live fails closed"): every fiat rail and
// every simulated chain answers 503 naming its field with nothing created; live KYC waits for an
// operator; the EVM chains, which run on real nodes, move live money.

let t: Tenant;
const noBank = apiAndWorkerOfTheirOwn('live-no-bank');
let live: ApiClient;
let customer: { id: string };

const US_ADDRESS = { line1: '1 Market St', city: 'San Francisco', state: 'CA', postal_code: '94105', country: 'US' };

/** What the tenant's live environment holds: rows the API or a workflow would write for a transfer. */
async function liveRows() {
  const count = async (table: 'transfers' | 'rail_payments' | 'external_accounts' | 'wallets') =>
    Number((await testDb().selectFrom(table).select(sql<string>`count(*)`.as('n'))
      .where('developer_id', '=', t.developerId).where('environment', '=', 'production').executeTakeFirstOrThrow()).n);
  return { transfers: await count('transfers'), rail_payments: await count('rail_payments'), external_accounts: await count('external_accounts'), wallets: await count('wallets') };
}

/** A valid payee or payer address on a chain that is not EVM. */
const chainAddress = (chain: SimulatedChain) => encodeChainAddress(chain, randomBytes(chain === 'tron' ? 20 : 32));

beforeAll(async () => {
  t = await createTenant();
  live = apiClient(t.liveSecret);
  const created = await live.post('/v0/customers', individual({ address: US_ADDRESS, phone: undefined }));
  expect(created.status).toBe(201);
  await live.post(`/v0/customers/${created.body.id}/kyc`, documents());
  // No identity vendor is configured for live: a complete submission waits for an operator.
  const inReview = await waitForKycStatus(live, created.body.id, 'manual_review');
  expect(inReview.kyc_status).toBe('manual_review');
  const decided = runCli(['kyc', 'decide', created.body.id, '--decision', 'approve', '--operator', 'live-test']);
  expect(decided.status).toBe(0);
  customer = await waitForKycStatus(live, created.body.id, 'approved');
}, 120_000);

test('live KYC is never approved automatically: a complete submission goes to manual review', async () => {
  const c = (await live.post('/v0/customers', individual({ address: US_ADDRESS, phone: undefined }))).body;
  await live.post(`/v0/customers/${c.id}/kyc`, documents());
  const reviewed = await waitForKycStatus(live, c.id, 'manual_review');
  expect(reviewed.kyc_status).toBe('manual_review');
  // The sandbox vendor, for the same submission, approves.
  const sandbox = (await t.api.post('/v0/customers', individual({ address: US_ADDRESS, phone: undefined }))).body;
  await t.api.post(`/v0/customers/${sandbox.id}/kyc`, documents());
  await waitForKycStatus(t.api, sandbox.id, 'approved');
});

test('without RAIL_PROVIDERS, every fiat rail and every simulated chain answers live keys 503, naming the leg, and creates nothing', async () => {
  // The stack's own API carries the ACH rails on the test bank's files (test/e2e/bank-files-ach.test.ts);
  // this API of the same stack has no live rail provider configured (a test's own processes have not).
  const live = apiClient(t.liveSecret, noBank.url());
  const before = await liveRows();
  const base = { payment_rail: 'base', currency: 'usdc' };
  const fiatOf = (rail: PaymentRail) => ({ payment_rail: rail, currency: RAILS[rail].currencies[0] });
  for (const rail of [...FIAT_RAILS, ...SIMULATED_CHAINS] as PaymentRail[]) {
    const chain = (SIMULATED_CHAINS as readonly string[]).includes(rail);
    const asSource = await live.post('/v0/transfers', {
      amount: '10.00', on_behalf_of: customer.id,
      source: chain ? { ...fiatOf(rail), from_address: chainAddress(rail as SimulatedChain) } : fiatOf(rail),
      destination: { ...base, to_address: RECEIVER },
    });
    expect([rail, asSource.status, asSource.body.error?.source]).toEqual([rail, 503, { location: 'body', key: 'source.payment_rail' }]);
    expect(asSource.body.error.code).toBe('service_unavailable');
    expect(asSource.body.error.message).toContain(rail);
    const asDestination = await live.post('/v0/transfers', {
      amount: '10.00', on_behalf_of: customer.id,
      source: { ...base, from_address: RECEIVER },
      destination: chain ? { ...fiatOf(rail), to_address: chainAddress(rail as SimulatedChain) } : { ...fiatOf(rail), external_account_id: 'ext_0000000000000000000000' },
    });
    expect([rail, asDestination.status, asDestination.body.error?.source]).toEqual([rail, 503, { location: 'body', key: 'destination.payment_rail' }]);
  }
  // Wallets on a simulated chain, and US bank accounts (verified over ACH), are refused the same way.
  for (const chain of SIMULATED_CHAINS) {
    const wallet = await live.post('/v0/wallets', { customer_id: customer.id, type: 'custodial', chains: ['base', chain] });
    expect([chain, wallet.status, wallet.body.error?.source]).toEqual([chain, 503, { location: 'body', key: 'chains[1]' }]);
  }
  const usAccount = await live.post('/v0/external-accounts', {
    customer_id: customer.id, type: 'us_bank_account', account_name: 'Jane Doe', routing_number: '021000021', account_number: '123456789',
  });
  expect([usAccount.status, usAccount.body.error?.source]).toEqual([503, { location: 'body', key: 'type' }]);
  expect(await liveRows()).toEqual(before);
  // The same requests with the sandbox key reach the simulators, as they should.
  const sandboxCustomer = (await t.api.post('/v0/customers', individual({ address: US_ADDRESS, phone: undefined }))).body;
  await t.api.post(`/v0/customers/${sandboxCustomer.id}/kyc`, documents());
  await waitForKycStatus(t.api, sandboxCustomer.id, 'approved');
  const sandboxWallet = await t.api.post('/v0/wallets', { customer_id: sandboxCustomer.id, type: 'custodial', chains: ['solana'] });
  expect(sandboxWallet.status).toBe(201);
});

test('a live payout on a chain whose gas asset has no rate on the live rate sheet answers 503', async () => {
  const before = await liveRows();
  // The test stack's LIVE_FX_RATES prices eth and fpn, not polygon's matic.
  const res = await live.post('/v0/transfers', {
    amount: '10.00', on_behalf_of: customer.id,
    source: { payment_rail: 'base', currency: 'usdc', from_address: RECEIVER },
    destination: { payment_rail: 'polygon', currency: 'usdc', to_address: RECEIVER },
  });
  expect([res.status, res.body.error?.source]).toEqual([503, { location: 'body', key: 'destination.payment_rail' }]);
  expect(res.body.error.message).toMatch(/matic/);
  expect(await liveRows()).toEqual(before);
});

test('live money moves on a real EVM node: USDC in on base, paid out on base, no simulator touched', async () => {
  const receiver = freshReceiver();
  const payer = await fundedCustomerWallet('base', 'usdc', 25_000_000n);
  const created = await live.post('/v0/transfers', {
    amount: '25.00', on_behalf_of: customer.id,
    source: { payment_rail: 'base', currency: 'usdc', from_address: payer.address },
    destination: { payment_rail: 'base', currency: 'usdc', to_address: receiver },
  });
  expect(created.status).toBe(201);
  const depositAddress = created.body.source_deposit_instructions.to_address;
  await payer.send(depositAddress, 25_000_000n);
  const done = await waitForTransferState(live, created.body.id, 'payment_processed', 90_000);
  expect(await tokenBalance('base', 'usdc', receiver)).toBe(BigInt(Math.round(Number(done.receipt.final_amount) * 1e6)));
  const simulated = await testDb().selectFrom('simulated_chain_transactions').select('hash')
    .where((eb) => eb.or([eb('to_address', '=', depositAddress), eb('from_address', '=', depositAddress), eb('idempotency_key', 'like', `${created.body.id}%`)])).execute();
  expect(simulated).toEqual([]);
  expect((await liveRows()).rail_payments).toBe(0);
});
