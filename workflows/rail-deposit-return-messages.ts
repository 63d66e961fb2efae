// How the API and the operators' tools name a rail deposit's return workflow, importable without
// the workflow's code (workflows/rail-deposit-return.ts): one per transfer and provider payment.

export const railDepositReturnWorkflowId = (transferId: string, providerPaymentId: string) => `rail-deposit-return:${transferId}:${providerPaymentId}`;
