import { proxyActivities, setCurrentDetails } from '@temporalio/workflow';
import type { StrayDepositActivities } from '../activities/stray-deposits';
import { chainRefusal, chainSend, chains } from './chain-activities';

const records = proxyActivities<StrayDepositActivities>({ startToCloseTimeout: '1 minute', retry: { initialInterval: '1 second', maximumInterval: '1 minute' } });

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
