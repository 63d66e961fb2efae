import { parseAmount } from '../../src/domain/money';
import { waitFor, type Tenant } from '.';

// Concurrent transfers from one wallet (test/e2e/chain-payouts-concurrent.test.ts and the bitcoin one in e2e-alone).

const TERMINAL = ['payment_processed', 'canceled', 'refunded', 'returned', 'undeliverable'];

/** A custodial wallet of the customer on `chain`, funded by the sandbox (one coin on bitcoin), spendable. */
export async function fundedWallet(t: Tenant, us: { id: string }, chain: string, currency: string, amount: string, scale: number, confirm?: () => Promise<unknown>) {
  const w = (await t.api.post('/v0/wallets', { customer_id: us.id, type: 'custodial', chains: [chain] })).body;
  expect((await t.api.post(`/v0/sandbox/wallets/${w.id}/fund`, { chain, currency, amount })).status).toBe(200);
  const funded = parseAmount(amount, scale)!.toString();
  await waitFor(async () => {
    await confirm?.();
    const b = (await t.api.get(`/v0/wallets/${w.id}/balances`)).body.data.find((x: any) => x.currency === currency);
    return b && parseAmount(b.balance, scale)!.toString() === funded;
  }, { what: `${amount} ${currency} spendable in the wallet`, timeoutMs: 60_000 });
  return w;
}

/** 30 transfers of `amount` from the wallet to `to`, all at once. */
export async function thirtyFromWallet(t: Tenant, us: { id: string }, w: any, chain: string, currency: string, amount: string, to: string) {
  return Promise.all(Array.from({ length: 30 }, () => t.api.post('/v0/transfers', {
    amount, on_behalf_of: us.id, source: { payment_rail: chain, currency, wallet_id: w.id }, destination: { payment_rail: chain, currency, to_address: to },
  })));
}

/** Every accepted transfer reaches a terminal state, and it is payment_processed. */
export async function expectAllProcessed(t: Tenant, ids: string[], wait: (p: Promise<any[]>) => Promise<any[]> = (p) => p) {
  const done = await wait(Promise.all(ids.map((id) => waitFor(async () => {
    const tr = (await t.api.get(`/v0/transfers/${id}`)).body;
    return TERMINAL.includes(tr.state) ? tr : undefined;
  }, { what: `transfer ${id} terminal`, timeoutMs: 240_000 }))));
  expect(done.map((x) => `${x.state} ${x.state_reason ?? ''}`.trim())).toEqual(ids.map(() => 'payment_processed'));
  return done;
}

