import { ApplicationFailure } from '@temporalio/activity';
import type { Db } from '../src/db';
import type { TransferState } from '../src/db/schema';
import { ASSET_SCALE, parseAmount } from '../src/domain/money';
import { strayDepositKey } from '../src/payments/keys';
import { FAILURE } from '../src/temporal/failures';
import { recordTransferStep, type TransferStep } from '../src/transfers/steps';
import { recordStrayDeposits } from '../src/transfers/stray-deposits';

export type { TransferStep };

/** A fiat payment naming a transfer's deposit reference that the transfer did not take (src/transfers/rail-events.ts). */
export interface RailStrayDeposit {
  transferId: string;
  /** The provider's id of the inbound payment: the return names it. */
  providerPaymentId: string;
  rail: string;
  currency: string;
  /** Decimal, as the provider reported it. */
  amount: string;
  /** The transfer goes on waiting for its own deposit (this one was not what it quoted). */
  stillWaiting: boolean;
}

/** The transfer workflow's records: each step, and deposits it did not take (src/transfers/steps.ts, stray-deposits.ts). */
export function createTransferDatabaseActivities(db: Db) {
  return {
    async recordTransferStep(input: { transferId: string } & TransferStep): Promise<{ state: TransferState }> {
      return recordTransferStep(db, input);
    },

    /**
     * A fiat payment that names a transfer's deposit reference but that the transfer did not take:
     * recorded like a stray chain deposit, and sent back (workflows/rail-deposit-return.ts).
     */
    async recordRailStrayDeposit(input: RailStrayDeposit): Promise<{ depositKey: string }> {
      const key = strayDepositKey(input.transferId, input.providerPaymentId);
      const amountMinor = parseAmount(input.amount, ASSET_SCALE[input.currency] ?? 2);
      if (amountMinor === null) throw ApplicationFailure.nonRetryable(`${input.amount} is not an amount of ${input.currency}`, FAILURE.InvalidData);
      await recordStrayDeposits(db, input.transferId, [{
        key, amountMinor, provider_payment_id: input.providerPaymentId, rail: input.rail, currency: input.currency,
      }], input.stillWaiting);
      return { depositKey: key };
    },
  };
}

export type TransferDatabaseActivities = ReturnType<typeof createTransferDatabaseActivities>;
