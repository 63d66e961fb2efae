import { bankFiles } from './bank-file-activities';

/** Uploads a recorded file again (`bank-files resend`): the bank lost or refused it for a reason now fixed. */
export async function bankFileUploadWorkflow(input: { fileId: string }): Promise<{ uploaded: boolean }> {
  return bankFiles.uploadBankFile(input);
}
