import { proxyLocalActivities, setCurrentDetails } from '@temporalio/workflow';
import type { StrayDepositActivities } from '../activities/stray-deposits';
import type { RailStrayDeposit, TransferDatabaseActivities } from '../activities/transfers-database';
import { rails, untilSettled } from './rail-activities';

// A few queries each: local activities, retried without end; keys make a retry the same record.
const records = proxyLocalActivities<TransferDatabaseActivities & StrayDepositActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/**
 * `rail-deposit-return:{transfer}:{provider payment}`: a fiat payment that named a transfer's deposit
 * reference but that the transfer did not take (another rail, currency or amount, a second deposit,
 * or after the transfer stopped waiting) goes back to its sender through the provider. Listed on the
 * transfer as a failed deposit, held for the sender in the ledger until the return settles. A return
 * the sender's bank rejects is held for operators (`payments release` runs this workflow again).
 * Started by the provider's webhook (src/resources/transfers/rail-events.ts).
 */
export async function returnRailDepositWorkflow(input: RailStrayDeposit): Promise<{ returned: boolean; reason?: string }> {
  setCurrentDetails(`Recording ${input.amount} ${input.currency} over ${input.rail} (${input.providerPaymentId}) as a stray deposit`);
  const { depositKey } = await records.recordRailStrayDeposit(input);
  const { returnKey, held } = await records.prepareStrayDepositReturn({ depositKey });
  if (held) {
    setCurrentDetails('Held for operators');
    return { returned: false, reason: 'held for operators' };
  }
  setCurrentDetails('Sending it back to the sender through the provider');
  const payment = await untilSettled(await rails.submitRailDepositReturn({ returnKey }));
  // Rejected, or returned: the provider shows it came back before (or without) its webhook (rail-events.ts).
  const refusal = payment.status === 'rejected' ? `rejected by the sender's bank (${payment.code})`
    : payment.status === 'returned' ? `returned by the sender's bank (${payment.code}) after it was sent` : undefined;
  const recorded = await records.recordStrayDepositReturn(refusal ? { returnKey, outcome: 'refused', reason: refusal } : { returnKey, outcome: 'settled' });
  // Held: refused, or sent back before this run recorded the settlement (the provider's webhook).
  // Histories from before the activity answered hold no answer.
  const holdReason = (recorded as typeof recorded | undefined)?.held ?? refusal;
  if (holdReason) {
    setCurrentDetails(`Held for operators: ${holdReason}`);
    return { returned: false, reason: holdReason };
  }
  setCurrentDetails('Returned to the sender');
  return { returned: true };
}
