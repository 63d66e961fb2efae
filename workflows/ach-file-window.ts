import { setCurrentDetails, upsertMemo, workflowInfo } from '@temporalio/workflow';
import type { AchWindow } from '../src/bank-files/ach-window';
import { bankFiles, bankFileUpload } from './bank-file-activities';

/**
 * One ACH file window, run by the schedule `bank-files:<window>`: the queued payments in one recorded
 * file, then its upload. The window's id (this workflow's) keys the file: a retry after a crash
 * uploads the same bytes under the same name.
 */
export async function achFileWindowWorkflow(input: { window: AchWindow | 'sepa'; uploadRetryMaxSeconds?: number }): Promise<{ file?: string; payments: number }> {
  const filed = await bankFiles.fileBankWindow({ windowId: workflowInfo().workflowId, window: input.window });
  if (!filed) {
    setCurrentDetails('No payment was queued for this window');
    return { payments: 0 };
  }
  // The Temporal UI shows which file the window made, with how many payments.
  upsertMemo({ file: filed.name, payments: filed.entryCount });
  setCurrentDetails(`${filed.name}: ${filed.entryCount} payments, uploading to the bank`);
  await bankFileUpload(input.uploadRetryMaxSeconds)({ fileId: filed.fileId });
  setCurrentDetails(`${filed.name}: ${filed.entryCount} payments, uploaded`);
  return { file: filed.name, payments: filed.entryCount };
}
