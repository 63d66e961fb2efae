import {
  ApplicationFailure, CancellationScope, condition, isCancellation, proxyActivities, proxyLocalActivities, setCurrentDetails, setHandler, type RetryPolicy,
} from '@temporalio/workflow';
import type { MpcActivities } from '../activities/mpc';
import { FAILURE, invalidDataReason } from '../src/temporal/failures';
import { mpcSessionStatus, submitMpcRound, type MpcRoundNotice, type MpcSessionInput, type MpcSessionResult } from './mpc-messages';

const retry: RetryPolicy = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', nonRetryableErrorTypes: [FAILURE.InvalidData] };
const mpc = proxyActivities<MpcActivities>({ startToCloseTimeout: '1 minute', retry });
// A platform round takes a few seconds of CPU at most (key generation's); it beats as it starts and
// between its steps, so a worker lost mid-round is noticed within seconds, not at the timeout.
const platformRounds = proxyActivities<MpcActivities>({ startToCloseTimeout: '2 minutes', heartbeatTimeout: '15 seconds', retry });
// A signing round is tens of milliseconds: run in the workflow's own task, it saves two trips
// through Temporal's matching per round (a third of a signature's latency through the API).
const signingRounds = proxyLocalActivities<MpcActivities>({ startToCloseTimeout: '30 seconds', retry });

const LAST_ROUND = 3;

/**
 * `mpc-session:{id}`: one run of the 2-of-3 protocol between the platform and the customer's signer
 * (docs/MPC.md). The signer posts its rounds through the API, which delivers each as the
 * `submitMpcRound` Update; the platform's round runs as an activity (its state sealed in the
 * database between rounds) and the Update answers the platform's messages. A message refused by the
 * platform refuses the Update and changes nothing; the round can be sent again. The session expires
 * if the signer does not finish in time; it ends canceled if its transfer is canceled meanwhile.
 */
export async function mpcSessionWorkflow(input: MpcSessionInput): Promise<MpcSessionResult> {
  let roundsDone = 0;
  let answering = false;
  let completed = false;
  /** Rounds whose Update handler has started and not yet ended (answering, or waiting its turn). */
  const inFlight = new Set<number>();
  const show = (what: string) => setCurrentDetails(`**${input.kind === 'signing' ? 'Signing' : 'Key generation'}** — ${what}`);

  setHandler(mpcSessionStatus, () => ({ roundsDone, ended: completed }));
  /** Runs the platform's side of a round and answers the signer with it. */
  const answerRound = async (round: number) => {
    answering = true;
    try {
      const rounds = input.kind === 'signing' ? signingRounds : platformRounds;
      const answer = await rounds.answerCustomerRound({ sessionId: input.sessionId, round });
      roundsDone = round;
      completed = answer.status === 'completed';
      show(completed ? 'Completed' : `Waiting for the customer's signer: round ${roundsDone + 1} of ${LAST_ROUND}`);
      return answer;
    } catch (err) {
      const reason = invalidDataReason(err);
      if (reason) throw ApplicationFailure.create({ type: FAILURE.InvalidData, message: `Refused: ${reason}`, nonRetryable: true });
      throw err;
    } finally {
      answering = false;
    }
  };
  setHandler(submitMpcRound, async (submission: MpcRoundNotice) => {
    // The next round may come while this one's answer is being recorded, or in the same task as it
    // (a worker lost mid-round: the signer read that answer from the database, and the round's Update
    // is delivered again beside the next one): it waits its turn.
    inFlight.add(submission.round);
    try {
      await condition(() => !answering && (completed || submission.round <= roundsDone + 1 || !inFlight.has(submission.round - 1)));
      if (completed || submission.round !== roundsDone + 1) throw new Error(`Round ${roundsDone + 1} is due, not round ${submission.round}`);
      return await answerRound(submission.round);
    } finally {
      inFlight.delete(submission.round);
    }
  }, {
    validator: (submission: MpcRoundNotice) => {
      if (completed) throw new Error('The session has completed');
      const due = roundsDone + 1;
      if (answering && submission.round === due) throw new Error(`The platform is answering round ${due} of this session; send it again once it answered`);
      if (submission.round !== due && !(inFlight.has(due) && submission.round === due + 1)) throw new Error(`Round ${due} is due, not round ${submission.round}`);
    },
  });

  await mpc.openPlatformParty({ sessionId: input.sessionId });
  show(`Waiting for the customer's signer: round 1 of ${LAST_ROUND}`);
  try {
    if (await condition(() => completed, input.expiresInMs)) return { status: 'completed' };
  } catch (err) {
    if (!isCancellation(err)) throw err;
    await CancellationScope.nonCancellable(() => mpc.closeUnfinishedMpcSession({ sessionId: input.sessionId, status: 'canceled', reason: 'canceled with its transfer' }));
    return { status: 'canceled', reason: 'canceled with its transfer' };
  }
  // A round being answered as time runs out finishes first: its answer stands.
  await condition(() => !answering);
  if (completed) return { status: 'completed' };
  const reason = `the customer's signer did not finish within ${Math.round(input.expiresInMs / 1000)} s`;
  const closed = await mpc.closeUnfinishedMpcSession({ sessionId: input.sessionId, status: 'expired', reason });
  return closed ? { status: 'expired', reason } : { status: 'completed' };
}
