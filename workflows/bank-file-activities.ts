import { proxyActivities } from '@temporalio/workflow';
import type { BankFileActivities } from '../activities/bank-files';

// How workflows call the bank-file activities (docs/BANK_FILES.md). The stuck-activity alarm
// (retry-alarm.ts) shows a window whose upload keeps failing (the bank's server down); it uploads
// once the server is back.
export const bankFiles = proxyActivities<BankFileActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});
