import { setCurrentDetails } from '@temporalio/workflow';
import { bankOutbox } from './bank-file-activities';

/** Run by the schedule `bank-files:outbox`: returns, notifications of change and incoming credits, each file once. */
export async function readBankOutboxWorkflow(): Promise<{ files: string[]; events: number }> {
  const read = await bankOutbox.readBankOutbox();
  if (read.files.length > 0) setCurrentDetails(`Read ${read.files.join(', ')}: ${read.events} rail events`);
  return read;
}
