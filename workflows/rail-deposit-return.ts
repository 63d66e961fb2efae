import { proxyLocalActivities, setCurrentDetails } from '@temporalio/workflow';
import type { StrayDepositActivities } from '../activities/stray-deposits';
import type { RailStrayDeposit, TransferDatabaseActivities } from '../activities/transfers-database';
import { rails, untilSettled } from './rail-activities';

// A few queries each: local activities, retried without end; keys make a retry the same record.
const records = proxyLocalActivities<TransferDatabaseActivities & StrayDepositActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

export const railDepositReturnWorkflowId = (transferId: string, providerPaymentId: string) => `rail-deposit-return:${transferId}:${providerPaymentId}`;

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
  // Returned: the provider shows it came back before (or without) its webhook (rail-events.ts).
  if (payment.status === 'rejected' || payment.status === 'returned') {
    const refusal = payment.status === 'rejected' ? `rejected by the sender's bank (${payment.code})` : `returned by the sender's bank (${payment.code}) after it was sent`;
    // Histories from before the activity answered hold no answer.
    const recorded = await records.recordStrayDepositReturn({ returnKey, outcome: 'refused', reason: refusal }) as { held: string | null } | undefined;
    const reason = recorded?.held ?? refusal;
    setCurrentDetails(`Held for operators: ${reason}`);
    return { returned: false, reason };
  }
  // Histories from before the activity answered hold no answer: those returns were settled.
  const recorded = await records.recordStrayDepositReturn({ returnKey, outcome: 'settled' }) as { held: string | null } | undefined;
  if (recorded?.held) {
    // The sender's bank sent it back before this run recorded the settlement (the provider's webhook).
    setCurrentDetails(`Held for operators: ${recorded.held}`);
    return { returned: false, reason: recorded.held };
  }
  setCurrentDetails('Returned to the sender');
  return { returned: true };
}
