import { formatAmount } from '../../src/domain/money';
import { documents, individual, runCli, waitFor, waitForKycStatus, type ApiClient } from './index';
import type { TakenEntry, TestBank } from './test-bank';

// Live parties for the ACH rails through the bank's files (tests and bench:bank-file-transfers): a
// customer an operator approved (live KYC has no identity vendor) and a US account proven by the
// micro-deposits the test bank took from the platform's file.

const US_ADDRESS = { line1: '1 Market St', city: 'San Francisco', state: 'CA', postal_code: '94105', country: 'US' };

const isCredit = (e: TakenEntry) => ['22', '32'].includes(e.transactionCode);

/** A live individual in the US, approved by an operator's decision (`kyc decide`). */
export async function liveApprovedCustomer(live: ApiClient, operator: string) {
  const created = await live.post('/v0/customers', individual({ address: US_ADDRESS, phone: undefined }));
  if (created.status !== 201) throw new Error(`customer not created: ${JSON.stringify(created.body)}`);
  await live.post(`/v0/customers/${created.body.id}/kyc`, documents());
  await waitForKycStatus(live, created.body.id, 'manual_review');
  const decided = runCli(['kyc', 'decide', created.body.id, '--decision', 'approve', '--operator', operator]);
  if (decided.status !== 0) throw new Error(`kyc decide: ${decided.stderr}`);
  return waitForKycStatus(live, created.body.id, 'approved');
}

/**
 * A live US account, verified with the two micro-deposits the bank took from the platform's file;
 * `recoveryDebit` is the later debit that takes them back.
 */
export async function liveVerifiedUsAccount(live: ApiClient, bank: TestBank, customerId: string, accountNumber: string, accountName = 'Jane Doe') {
  const created = await live.post('/v0/external-accounts', {
    customer_id: customerId, type: 'us_bank_account', account_name: accountName, routing_number: '021000021', account_number: accountNumber,
  });
  if (created.status !== 201) throw new Error(`account not created: ${JSON.stringify(created.body)}`);
  const mine = (e: TakenEntry) => e.account === accountNumber && e.description === 'ACCTVERIFY';
  const credits = () => bank.entries.filter((e) => mine(e) && isCredit(e));
  await bank.waitForEntry((e) => mine(e) && isCredit(e) && credits().length === 2, 90_000);
  const amounts = credits().map((e) => formatAmount(e.amountMinor, 2));
  const verified = await waitFor(async () => {
    const res = await live.post(`/v0/external-accounts/${created.body.id}/verify`, { amounts });
    return res.status === 200 ? res.body : undefined;
  }, { what: 'the live micro-deposits settled and answered', timeoutMs: 60_000 });
  if (verified.status !== 'verified') throw new Error(`account ${created.body.id} not verified: ${JSON.stringify(verified)}`);
  return {
    account: created.body,
    microDepositsMinor: credits().reduce((s, e) => s + e.amountMinor, 0n),
    recoveryDebit: () => bank.waitForEntry((e) => mine(e) && !isCredit(e)),
  };
}
