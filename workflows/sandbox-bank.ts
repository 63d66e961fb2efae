import { proxyActivities, setCurrentDetails } from '@temporalio/workflow';
import type { SandboxBankActivities } from '../activities/sandbox-bank';

const { answerAsSandboxBank, writeSandboxBankStatements } = proxyActivities<SandboxBankActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/** Run by the schedule `sandbox-bank` (npm start with SANDBOX_BANK=on): the bank takes the files the platform sent and answers them. */
export async function sandboxBankWorkflow(): Promise<{ taken: string[]; answers: string[] }> {
  const done = await answerAsSandboxBank();
  if (done.taken.length > 0) setCurrentDetails(`Took ${done.taken.join(', ')}; answered ${done.answers.join(', ') || 'nothing'}`);
  return done;
}

/** Run by the schedule `sandbox-bank:statements`: the day's statements of both accounts (BAI2 and camt.053) in the bank's outbox. */
export async function sandboxBankStatementWorkflow(): Promise<string[]> {
  const written = await writeSandboxBankStatements();
  setCurrentDetails(`Wrote ${written.join(', ')}`);
  return written;
}
