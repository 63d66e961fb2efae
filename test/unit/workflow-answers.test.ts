import { ServiceError } from '@temporalio/client';
import { ApiError } from '../../src/errors';
import { awaitWorkflowAnswer, updateDroppedByServer, type WorkflowDeps } from '../../src/temporal/workflow-answers';

// An Update the server drops before the workflow took it (its workflow task failed or timed out on a
// loaded worker) is sent again within the deadline; anything else is the caller's, as it was.

const grpc = (code: number, message: string) => Object.assign(new Error(`${code} ${message}`), { code });
const droppedByTaskFailure = () => new ServiceError('Workflow Update failed', {
  cause: grpc(9, 'FAILED_PRECONDITION: Unable to perform workflow execution update due to unexpected workflow task failure.'),
});
const deps = (seconds: number) => ({
  temporal: { withDeadline: <T>(_deadline: number, fn: () => Promise<T>) => fn() }, config: { WORKFLOW_ANSWER_TIMEOUT_SECONDS: seconds },
}) as unknown as WorkflowDeps;

test('an Update dropped with its failed workflow task is sent again, and its answer returned', async () => {
  let sent = 0;
  const answer = await awaitWorkflowAnswer(deps(5), 'send it again', async () => {
    sent += 1;
    if (sent === 1) throw droppedByTaskFailure();
    return 'taken';
  });
  expect([answer, sent]).toEqual(['taken', 2]);
});

test('dropped until the deadline: a 503 that says what to do, not an internal error', async () => {
  const answer = awaitWorkflowAnswer(deps(1), 'send it again', async () => {
    throw droppedByTaskFailure();
  });
  await expect(answer).rejects.toBeInstanceOf(ApiError);
  await expect(answer).rejects.toMatchObject({ message: expect.stringMatching(/did not answer within 1 s .*; send it again$/) });
});

test('which server errors are a dropped Update: a failed workflow task, an aborted update; not a refusal or a missing workflow', () => {
  expect(updateDroppedByServer(droppedByTaskFailure())).toBe(true);
  expect(updateDroppedByServer(new ServiceError('Workflow Update failed', { cause: grpc(14, 'UNAVAILABLE: workflow update was aborted') }))).toBe(true);
  expect(updateDroppedByServer(new ServiceError('Workflow Update failed', { cause: grpc(5, 'NOT_FOUND: workflow not found') }))).toBe(false);
  expect(updateDroppedByServer(new ServiceError('Workflow Update failed', { cause: grpc(3, 'INVALID_ARGUMENT: workflow task failure') }))).toBe(false);
  expect(updateDroppedByServer(new Error('9 workflow task failure'))).toBe(false);
});
