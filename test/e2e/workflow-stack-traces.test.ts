import { apiClient, temporalClient, waitFor } from '../harness';
import { apiAndWorkerOfTheirOwn } from '../harness/own-processes';
import { RECEIVER, transferTestParties } from '../harness/transfers';
import { transferWorkflowId } from '../../src/transfers/workflow-client';

// The SDK's workflow stack traces (the Web UI's Stack Trace tab) cost about a fifth of the worker's
// CPU per transfer: off unless WORKFLOW_STACK_TRACES=on (docs/OPERATIONS.md). The suite's own worker
// runs with the default; a worker of this file's own runs with them on. The transfers here wait for
// a chain deposit, which their workflow watches from its first task (a bank deposit's workflow has
// no task until the deposit comes: nothing to query before it).

const withStackTraces = apiAndWorkerOfTheirOwn('stacks', { WORKFLOW_STACK_TRACES: 'on' });
const { parties: p, usdcToWire } = transferTestParties();

async function stackTraceOf(transferId: string): Promise<string> {
  const client = await temporalClient();
  return client.workflow.getHandle(transferWorkflowId(transferId)).query<string>('__stack_trace');
}

test('by default the worker collects no stack traces: the query says they are off; the transfer is served as ever', async () => {
  const created = await p.t.api.post('/v0/transfers', usdcToWire('12.00', RECEIVER));
  expect(created.status).toBe(201);
  // Asked once the workflow's first task has run (the query needs it).
  await waitFor(async () => (await (await temporalClient()).workflow.getHandle(transferWorkflowId(created.body.id)).fetchHistory()).events?.some((e) => e.workflowTaskCompletedEventAttributes), { what: 'the first workflow task' });
  await expect(stackTraceOf(created.body.id)).rejects.toThrow(/stack traces are not enabled/);
  expect((await p.t.api.get(`/v0/transfers/${created.body.id}`)).body.state).toBe('awaiting_funds');
});

test('with WORKFLOW_STACK_TRACES=on the stack trace shows where the transfer waits', async () => {
  withStackTraces.startWorker();
  const api = apiClient(p.t.secret, withStackTraces.url());
  const created = await api.post('/v0/transfers', usdcToWire('13.00', RECEIVER));
  expect(created.status).toBe(201);
  // Answered once the worker just started polls the file's own task queue.
  const trace = await waitFor(() => stackTraceOf(created.body.id), { timeoutMs: 60_000, what: 'the stack trace' });
  expect(trace).toMatch(/waitForFunds/);
  expect(trace).toMatch(/workflows\/transfer\.ts/);
});
