import type { DataCipher } from '../src/crypto';
import type { Db } from '../src/db';
import type { SanctionsScreener } from '../src/sanctions/screener';
import { StrayDepositReturns } from '../src/transfers/stray-deposit-returns';

/**
 * The database and screening side of returning stray deposits to their senders
 * (src/transfers/stray-deposit-returns.ts): chain deposits (workflows/stray-deposit-return.ts; the chain
 * side is in activities/chains.ts) and fiat ones (workflows/rail-deposit-return.ts; activities/fiat-rails.ts).
 */
export function createStrayDepositActivities(deps: { db: Db; cipher: DataCipher; sanctions: SanctionsScreener }) {
  const returns = new StrayDepositReturns(deps);
  return {
    /** The transfer's stray deposits whose return has not been decided or not finished, oldest first. */
    async listStrayDepositsToReturn(input: { transferId: string }): Promise<{ depositKey: string }[]> {
      return returns.toReturn(input.transferId);
    },

    /** Decides whether a stray deposit goes back (screened), and records the return with the money held for the sender. */
    async prepareStrayDepositReturn(input: { depositKey: string }): Promise<{ returnKey: string; held: boolean }> {
      return returns.prepare(input.depositKey);
    },

    /** The return is final, or was refused (held for operators). Answers why the return is held, if it is. */
    async recordStrayDepositReturn(
      input: { returnKey: string } & ({ outcome: 'settled'; networkFee?: string } | { outcome: 'refused'; reason: string }),
    ): Promise<{ held: string | null }> {
      return returns.record(input);
    },
  };
}

export type StrayDepositActivities = ReturnType<typeof createStrayDepositActivities>;
