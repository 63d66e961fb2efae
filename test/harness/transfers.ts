import { createPublicClient, createTestClient, createWalletClient, erc20Abi, getAddress, http, type Account, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { ChainKeys, sandboxTokenAddress, STABLECOIN_ABI } from '../../src/chains/evm';
import type { EvmChain } from '../../src/domain/rails';
import { verifyLedger } from '../../src/ledger/ledger';
import { Worker } from '@temporalio/worker';
import { createTenant, documents, individual, stack, temporalClient, testDb, waitFor, waitForKycStatus, workflowBundle, type ApiClient } from './index';
import { TEST_MNEMONIC } from './stack';

// Helpers for transfer tests: approved customers by country, usable external accounts, the chains.

const ADDRESSES: Record<string, Record<string, string>> = {
  US: { line1: '1 Market St', city: 'San Francisco', state: 'CA', postal_code: '94105', country: 'US' },
  DE: { line1: 'Unter den Linden 1', city: 'Berlin', postal_code: '10117', country: 'DE' },
  GB: { line1: '10 Downing St', city: 'London', postal_code: 'SW1A 2AA', country: 'GB' },
  BR: { line1: 'Av. Paulista 1000', city: 'São Paulo', postal_code: '01310-100', country: 'BR' },
  MX: { line1: 'Paseo de la Reforma 1', city: 'Ciudad de México', postal_code: '06600', country: 'MX' },
};

/** An address outside the platform that payouts on the local chains go to. */
export const RECEIVER = '0x8ba1f109551bD432803012645Ac136ddd64DBA72';

/** An address outside the platform that no other test pays: a test that measures what arrived there counts only its own payouts. */
export const freshReceiver = (): string => privateKeyToAccount(generatePrivateKey()).address;

/** The parties most transfer tests move money for: a tenant of their own, an approved US customer and its verified US bank account. */
export async function usTransferParties() {
  const t = await createTenant();
  const us = await approvedCustomer(t.api, 'US');
  const usAccount = await verifiedUsAccount(t.api, us.id);
  return { t, us, usAccount };
}

/**
 * For a test file of transfers: the parties its tests move money for, created before them, and the
 * ledger checked after each test; with the transfer bodies and the deposit its tests use most.
 */
export function transferTestParties() {
  const parties = {} as Awaited<ReturnType<typeof usTransferParties>>;
  beforeAll(async () => {
    Object.assign(parties, await usTransferParties());
  }, 120_000);
  afterEach(expectLedgerBalanced);
  return {
    parties,
    achToWire: (amount: string, extra?: Record<string, unknown>) => achToWireFor(parties.us, parties.usAccount, amount, extra),
    usdcToWire: (amount: string, fromAddress: string) => usdcToWireFor(parties.us, parties.usAccount, amount, fromAddress),
    deposit: (id: string) => sandboxDeposit(parties.t.api, id),
  };
}

/** ACH in, wire out: `customer` pays `account`. */
export const achToWireFor = (customer: { id: string }, account: { id: string }, amount: string, extra: Record<string, unknown> = {}) => ({
  amount, on_behalf_of: customer.id,
  source: { payment_rail: 'ach', currency: 'usd' },
  destination: { payment_rail: 'wire', currency: 'usd', external_account_id: account.id },
  ...extra,
});

/** An offramp: USDC `customer` sends from `fromAddress` on ethereum, paid out by wire to `account`. */
export const usdcToWireFor = (customer: { id: string }, account: { id: string }, amount: string, fromAddress: string) => ({
  amount, on_behalf_of: customer.id,
  source: { payment_rail: 'ethereum', currency: 'usdc', from_address: fromAddress },
  destination: { payment_rail: 'wire', currency: 'usd', external_account_id: account.id },
});

/** An active, KYC-approved individual living in `country`, with that country's endorsements. */
export async function approvedCustomer(api: ApiClient, country = 'US', overrides: Record<string, unknown> = {}) {
  const c = (await api.post('/v0/customers', individual({ address: ADDRESSES[country], phone: undefined, ...overrides }))).body;
  if (!c.id) throw new Error(`customer not created: ${JSON.stringify(c)}`);
  await api.post(`/v0/customers/${c.id}/kyc`, documents());
  return waitForKycStatus(api, c.id, 'approved');
}

/** A US bank account verified through its micro-deposits. */
export async function verifiedUsAccount(api: ApiClient, customerId: string, accountNumber = `${Date.now()}`.slice(-10)) {
  const account = (await api.post('/v0/external-accounts', {
    customer_id: customerId, type: 'us_bank_account', account_name: 'Jane Doe', routing_number: '021000021', account_number: accountNumber,
  })).body;
  const amounts = await waitFor(async () => {
    const credits = (await api.get(`/v0/sandbox/external-accounts/${account.id}/micro-deposits`)).body.data.filter((p: any) => p.direction === 'credit');
    if (credits.length < 2) return undefined;
    const res = await api.post(`/v0/external-accounts/${account.id}/verify`, { amounts: credits.map((p: any) => p.amount) });
    return res.status === 200 ? res.body : undefined;
  }, { what: 'micro-deposit verification', timeoutMs: 60_000 });
  if (amounts.status !== 'verified') throw new Error('not verified');
  return account;
}

export async function internationalAccount(api: ApiClient, customerId: string, iban: string, bic: string, country: string, name = 'Erika Mustermann') {
  const res = await api.post('/v0/external-accounts', {
    customer_id: customerId, type: 'international_bank_account', account_name: name, iban, bic, bank_name: 'Test Bank', bank_country: country,
  });
  if (res.status !== 201) throw new Error(`account not created: ${JSON.stringify(res.body)}`);
  return res.body;
}

/**
 * The customer's deposit arrives (sandbox): a fiat payment with the deposit reference, or a token
 * transfer to the deposit address; `body` for another amount or a sender's name. Asserts it was taken in.
 */
export async function sandboxDeposit(api: ApiClient, transferId: string, body?: { amount?: string; sender_name?: string }) {
  const res = await api.post(`/v0/sandbox/transfers/${transferId}/deposit`, body);
  if (res.status !== 200) throw new Error(`deposit to ${transferId}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Waits until the workflow of a transfer funded on chain is watching the chain for the deposit. */
export async function waitForChainWatch(transferId: string) {
  const client = await temporalClient();
  await waitFor(async () => {
    const { pendingActivities } = (await client.workflow.getHandle(`transfer:${transferId}`).describe()).raw;
    return pendingActivities?.some((a) => a.activityType?.name === 'watchChainDeposit');
  }, { what: `transfer ${transferId} watching the chain` });
}

/** Waits until the transfer reaches `state` and returns it. */
/** `intervalMs`: how often to look (a stack on a key of 10 requests/s, as `npm start` makes, needs more than the default 100 ms). */
export async function waitForTransferState(api: ApiClient, id: string, state: string, timeoutMs = 60_000, intervalMs?: number) {
  let last = '';
  try {
    return await waitFor(async () => {
      const t = (await api.get(`/v0/transfers/${id}`)).body;
      last = `${t.state} (${t.state_reason ?? ''})`;
      return t.state === state ? t : undefined;
    }, { timeoutMs, intervalMs, what: `transfer ${id} in ${state}` });
  } catch (err) {
    throw new Error(`${(err as Error).message}; last seen ${last}`);
  }
}

/** The ledger holds its invariants (entries balance, balances match, nothing negative that may not be). */
export async function expectLedgerBalanced() {
  const result = await verifyLedger(testDb());
  if (!result.ok) throw new Error(`ledger problems:\n${result.problems.join('\n')}`);
}

// The local EVM chains the test stack runs.
export const chainKeys = new ChainKeys(TEST_MNEMONIC);

export function chainUrl(chain: EvmChain): string {
  const entry = stack().processEnv.EVM_RPC_URLS.split(',').find((p) => p.startsWith(`${chain}=`));
  return entry!.slice(chain.length + 1);
}

/** The project's sandbox stablecoin contract of `currency` on a local chain. */
export const tokenAddressOf = (chain: EvmChain, currency: string): string => sandboxTokenAddress(chainKeys, chain, currency);

export async function tokenBalance(chain: EvmChain, currency: string, address: string): Promise<bigint> {
  const client = createPublicClient({ transport: http(chainUrl(chain)) });
  return client.readContract({ address: sandboxTokenAddress(chainKeys, chain, currency), abi: erc20Abi, functionName: 'balanceOf', args: [getAddress(address)] });
}

/**
 * A customer's own wallet on the local chain, funded with tokens by the issuer: a fresh key with
 * ether for gas (no other test file sends from it or measures it), or anvil's dev account `index`
 * (anvil funds indexes 0–9 with ether; 0 and 1 are the platform's).
 */
export async function fundedCustomerWallet(chain: EvmChain, currency: string, amountMinor: bigint, index?: number) {
  if (index !== undefined) return fundedWallet(chain, currency, amountMinor, chainKeys.account(index));
  const account = privateKeyToAccount(generatePrivateKey());
  await createTestClient({ mode: 'anvil', transport: http(chainUrl(chain)) }).setBalance({ address: account.address, value: 10n ** 18n });
  return fundedWallet(chain, currency, amountMinor, account);
}

/**
 * A wallet at an address whose key nobody here holds (a listed one, say): anvil sends its
 * transactions unsigned (impersonation), with ETH for gas and `amountMinor` tokens minted to it.
 */
export async function impersonatedWallet(chain: EvmChain, currency: string, address: Hex, amountMinor: bigint) {
  const node = createTestClient({ mode: 'anvil', transport: http(chainUrl(chain)) });
  await node.impersonateAccount({ address });
  await node.setBalance({ address, value: 10n ** 18n });
  return fundedWallet(chain, currency, amountMinor, address);
}

async function fundedWallet(chain: EvmChain, currency: string, amountMinor: bigint, wallet: Account | Hex) {
  const url = chainUrl(chain);
  const client = createPublicClient({ transport: http(url), cacheTime: 0 });
  const address = typeof wallet === 'string' ? wallet : wallet.address;
  const issuer = createWalletClient({ account: chainKeys.issuer, transport: http(url) });
  const chainDef = { id: await client.getChainId(), name: chain, nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [url] } } };
  const hash = await issuer.writeContract({ address: sandboxTokenAddress(chainKeys, chain, currency), abi: STABLECOIN_ABI, functionName: 'mint', args: [address, amountMinor], chain: chainDef });
  await client.waitForTransactionReceipt({ hash, pollingInterval: 100 });
  return {
    address,
    /** A real ERC-20 transfer from the wallet. */
    async send(to: string, value: bigint): Promise<Hex> {
      const w = createWalletClient({ account: wallet, transport: http(url) });
      const h = await w.writeContract({ address: sandboxTokenAddress(chainKeys, chain, currency), abi: erc20Abi, functionName: 'transfer', args: [getAddress(to), value], chain: chainDef });
      await client.waitForTransactionReceipt({ hash: h, pollingInterval: 100 });
      return h;
    },
  };
}

/**
 * The histories of a chain's wallet watcher (once it has ended a watch period of its own) and of
 * `transferIds` replay against the current workflow code.
 */
export async function expectChainHistoriesReplay(chain: string, transferIds: string[]) {
  const client = await temporalClient();
  await waitFor(async () => (await client.workflow.getHandle(`wallet-watcher:${chain}`).fetchHistory()).events!.filter((e) => e.activityTaskCompletedEventAttributes).length >= 1,
    // A watcher whose worker was killed mid-period starts its next only after the activity's
    // one-minute heartbeat timeout.
    { timeoutMs: 80_000, what: `a watch period of ${chain}'s watcher to end` });
  const ids = [`wallet-watcher:${chain}`, ...transferIds.map((id) => `transfer:${id}`)];
  expect(ids.length).toBeGreaterThanOrEqual(4);
  const histories = await Promise.all(ids.map(async (workflowId) => ({ workflowId, history: await client.workflow.getHandle(workflowId).fetchHistory() })));
  let replayed = 0;
  for await (const result of Worker.runReplayHistories(workflowBundle(), histories)) {
    expect(result.error).toBeUndefined();
    replayed++;
  }
  expect(replayed).toBe(ids.length);
}
