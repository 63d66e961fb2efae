import { proxyActivities, setCurrentDetails, type RetryPolicy } from '@temporalio/workflow';
import type { ChainActivities } from '../activities/chains';
import type { StrayDepositActivities } from '../activities/stray-deposits';
import { chainRefusal } from './activity-failures';

const records = proxyActivities<StrayDepositActivities>({ startToCloseTimeout: '1 minute', retry: { initialInterval: '1 second', maximumInterval: '1 minute' } });
const chainRetry: RetryPolicy = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', nonRetryableErrorTypes: ['PayoutRejected'] };
// Sending is one signed broadcast: a short timeout re-sends the same bytes soon after a crash.
const chainSend = proxyActivities<ChainActivities>({ startToCloseTimeout: '10 seconds', retry: chainRetry });
// Sweeping and waiting for finality heartbeat: a lost worker is noticed within seconds.
const chains = proxyActivities<ChainActivities>({ startToCloseTimeout: '10 minutes', heartbeatTimeout: '10 seconds', retry: chainRetry });

/**
 * `stray-deposits:{transfer id}`: the stray deposits at a transfer's deposit address (another amount,
 * a repeat, or anything after the transfer stopped waiting) go back to their senders, one at a time
 * (each spends the address's gas and nonce): screened, swept into the treasury, sent back from it.
 * A sender on a sanctions list, a mint, or a return the chain refuses is held for operators.
 * Started by the scan (workflows/stray-deposit-scan.ts) once the transfer no longer uses its address.
 */
export async function returnStrayDepositsWorkflow(input: { transferId: string }): Promise<{ returned: number; held: number }> {
  const outcome = { returned: 0, held: 0 };
  const strays = await records.listStrayDepositsToReturn({ transferId: input.transferId });
  for (const [n, { depositKey }] of strays.entries()) {
    setCurrentDetails(`Returning stray deposit ${n + 1} of ${strays.length}: screening the sender`);
    const { returnKey, held } = await records.prepareStrayDepositReturn({ depositKey });
    if (held) {
      outcome.held++;
      continue;
    }
    setCurrentDetails(`Returning stray deposit ${n + 1} of ${strays.length}: moving it into the treasury`);
    await chains.sweepChainDeposit({ transferId: input.transferId, strayDepositKey: depositKey });
    setCurrentDetails(`Returning stray deposit ${n + 1} of ${strays.length}: sending it back`);
    try {
      await chainSend.sendStrayDepositReturn({ returnKey });
    } catch (err) {
      const reason = chainRefusal(err);
      if (!reason) throw err;
      await records.recordStrayDepositReturn({ returnKey, outcome: 'refused', reason });
      outcome.held++;
      continue;
    }
    const final = await chains.awaitStrayDepositReturn({ returnKey });
    if (final.status === 'confirmed') {
      await records.recordStrayDepositReturn({ returnKey, outcome: 'settled', networkFee: `${final.networkFee} (smallest unit of ${final.nativeAsset})` });
      outcome.returned++;
    } else {
      await records.recordStrayDepositReturn({ returnKey, outcome: 'refused', reason: final.status === 'failed' ? final.reason : 'not final' });
      outcome.held++;
    }
  }
  setCurrentDetails(`Done: ${outcome.returned} returned, ${outcome.held} held for operators`);
  return outcome;
}
