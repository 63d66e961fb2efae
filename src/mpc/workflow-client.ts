import { createHash } from 'node:crypto';
import type { PlatformDeps } from '../deps';
import type { Db } from '../db';
import { setTimeout } from 'node:timers/promises';
import { isWorkflowFinished, sendUpdate, type WorkflowDeps } from '../temporal/workflow-answers';
import type { mpcSessionWorkflow } from '../../workflows/mpc-session';
import { mpcSessionWorkflowId, submitMpcRound } from '../../workflows/mpc-messages';
import { keepCustomerRound, type MpcRoundSubmission, type PlatformAnswer } from './sessions';

/** Starts a key generation's session workflow (a signing's is its transfer's child). */
export async function startKeygenSession(deps: Pick<PlatformDeps, 'config' | 'temporal'>, sessionId: string, walletId: string) {
  await deps.temporal.workflow.start<typeof mpcSessionWorkflow>('mpcSessionWorkflow', {
    workflowId: mpcSessionWorkflowId(sessionId),
    taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
    args: [{ sessionId, kind: 'key_generation', expiresInMs: deps.config.MPC_KEYGEN_EXPIRY_MS }],
    staticSummary: `Key generation of MPC wallet ${walletId}`,
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
}

/**
 * Keeps a customer round and delivers it to the session's workflow, which answers once the platform's
 * round ran. The Update id is the round's and its content's: the same round sent again after a lost
 * answer is the same Update, answered once; a corrected round after a refusal is a new one.
 */
export async function submitCustomerRound(deps: WorkflowDeps & { db: Db }, sessionId: string, submission: MpcRoundSubmission): Promise<PlatformAnswer> {
  await keepCustomerRound(deps.db, sessionId, submission);
  const update = () => deps.temporal.workflow.getHandle(mpcSessionWorkflowId(sessionId))
    .executeUpdate(submitMpcRound, { args: [{ round: submission.round }], updateId: `round:${sessionId}:${submission.round}:${digest(submission)}` });
  return sendUpdate(deps, {
    afterwards: 'send the same round again (it is answered once)', whenFinished: 'The session has ended', dataField: 'messages',
  }, async () => {
    // A signing session is recorded by its transfer's workflow a moment before that workflow starts
    // the session's own: a signer that found it in between waits for it (within the answer's deadline).
    for (;;) {
      try {
        return await update();
      } catch (err) {
        if (!isWorkflowFinished(err) || !(await sessionAwaitsCustomer(deps.db, sessionId))) throw err;
        await setTimeout(100);
      }
    }
  });
}

async function sessionAwaitsCustomer(db: Db, sessionId: string): Promise<boolean> {
  const row = await db.selectFrom('mpc_sessions').select('status').where('id', '=', sessionId).executeTakeFirst();
  return row?.status === 'awaiting_customer';
}

const digest = (submission: MpcRoundSubmission) => createHash('sha256').update(JSON.stringify(submission)).digest('hex').slice(0, 32);
