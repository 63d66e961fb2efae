import { proxyActivities, type ActivityOptions } from '@temporalio/workflow';
import type { BankFileActivities } from '../activities/bank-files';

// How workflows call the bank-file activities (docs/BANK_FILES.md). The stuck-activity alarm
// (retry-alarm.ts) shows a window whose upload keeps failing (the bank's server down); it uploads
// once the server is back.
// A file of 10,000 entries is built and sent in seconds: an attempt lost with a crashed worker is
// tried again after a minute at most.
const bankFileOptions = (maximumIntervalSeconds = 60): ActivityOptions => ({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: `${maximumIntervalSeconds} seconds` },
});

export const bankFiles = proxyActivities<BankFileActivities>(bankFileOptions());

/** The upload, its retries at most `maximumIntervalSeconds` apart (BANK_UPLOAD_RETRY_MAX_SECONDS, passed by the window's schedule). */
export const bankFileUpload = (maximumIntervalSeconds?: number) =>
  proxyActivities<Pick<BankFileActivities, 'uploadBankFile'>>(bankFileOptions(maximumIntervalSeconds)).uploadBankFile;

/** The outbox: a read of many files heartbeats as it goes, so that one cut off by a crash is tried again within seconds. */
export const bankOutbox = proxyActivities<Pick<BankFileActivities, 'readBankOutbox'>>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});
