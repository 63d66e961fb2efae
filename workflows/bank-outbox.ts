import { setCurrentDetails } from '@temporalio/workflow';
import { bankFiles } from './bank-file-activities';

/** Run by the schedule `bank-files:outbox`: returns, notifications of change and incoming credits, each file once. */
export async function readBankOutboxWorkflow(): Promise<{ files: string[]; events: number }> {
  const read = await bankFiles.readBankOutbox();
  if (read.files.length > 0) setCurrentDetails(`Read ${read.files.join(', ')}: ${read.events} rail events`);
  return read;
}
