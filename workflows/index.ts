// Every workflow the worker registers. One file per workflow.
export { kycWorkflow } from './kyc';
export { reapIdempotencyKeysWorkflow } from './maintenance';
export { screeningBatchWorkflow } from './screening-batch';
export { microDepositVerificationWorkflow } from './micro-deposit-verification';
export { transferWorkflow } from './transfer';
export { scanStrayDepositsWorkflow } from './stray-deposit-scan';
export { returnStrayDepositsWorkflow } from './stray-deposit-return';
export { returnRailDepositWorkflow } from './rail-deposit-return';
export { webhookEndpointWorkflow } from './webhook-endpoint';
export { walletWatcherWorkflow } from './wallet-watcher';
export { mpcSessionWorkflow } from './mpc-session';
export { achFileWindowWorkflow } from './ach-file-window';
export { bankFileUploadWorkflow } from './bank-file-upload';
export { readBankOutboxWorkflow } from './bank-outbox';
export { sandboxBankStatementWorkflow, sandboxBankWorkflow } from './sandbox-bank';
export { dailyReconciliationWorkflow } from './reconciliation';
