import type { Tenant } from '../src/db/tenant-scope';
import type { Db } from '../src/db';
import type { RailAdapter } from '../src/providers/rails';

/** Activities that move money on the ACH rail (the sandbox simulator or a real provider). */
export function createAchRailActivities(deps: { db: Db; rail: RailAdapter }) {
  const accountTenant = async (externalAccountId: string): Promise<Tenant> => {
    const a = await deps.db.selectFrom('external_accounts').select(['developer_id', 'environment']).where('id', '=', externalAccountId).executeTakeFirstOrThrow();
    return { developerId: a.developer_id, environment: a.environment };
  };
  /**
   * Whether the micro-deposits have settled, or one of them never will: the receiving bank rejected
   * or returned it (R03, no such account), with its code.
   */
  async function microDepositsOutcome(input: { paymentIds: string[] }): Promise<{ settled: boolean; failedCode?: string }> {
    const payments = await Promise.all(input.paymentIds.map((id) => deps.rail.getPayment(id)));
    const failed = payments.find((p) => p.status === 'rejected' || p.status === 'returned');
    if (failed) return { settled: false, failedCode: failed.code ?? 'R03' };
    return { settled: payments.every((p) => p.status === 'settled') };
  }
  return {
    /** One of the two verification credits; the key (account + index) makes a retry or a replay a no-op. */
    async sendMicroDeposit(input: { externalAccountId: string; index: number; amountMinor: number }) {
      const payment = await deps.rail.submitPayment({
        tenant: await accountTenant(input.externalAccountId),
        idempotencyKey: `${input.externalAccountId}:micro-deposit:${input.index}`,
        rail: 'ach',
        direction: 'credit',
        amountMinor: BigInt(input.amountMinor),
        currency: 'usd',
        externalAccountId: input.externalAccountId,
        purpose: 'micro_deposit',
      });
      return { paymentId: payment.id, settlesAt: payment.settlesAt.getTime() };
    },

    /** Histories from before microDepositsOutcome call this one. */
    async paymentsSettled(input: { paymentIds: string[] }): Promise<boolean> {
      return (await microDepositsOutcome(input)).settled;
    },

    microDepositsOutcome,

    /** After a successful verification the two credits come back in one debit. */
    async recoverMicroDeposits(input: { externalAccountId: string; amountMinor: number }) {
      const payment = await deps.rail.submitPayment({
        tenant: await accountTenant(input.externalAccountId),
        idempotencyKey: `${input.externalAccountId}:micro-deposit-recovery`,
        rail: 'ach',
        direction: 'debit',
        amountMinor: BigInt(input.amountMinor),
        currency: 'usd',
        externalAccountId: input.externalAccountId,
        purpose: 'micro_deposit_recovery',
      });
      return { paymentId: payment.id };
    },
  };
}

export type AchRailActivities = ReturnType<typeof createAchRailActivities>;
