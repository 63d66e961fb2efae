import {
  ApplicationFailure, CancellationScope, condition, isCancellation, patched, proxyActivities, proxyLocalActivities, setCurrentDetails, setHandler, type RetryPolicy,
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
 * One session's state and the signer's rounds: each round's Update waits its turn (the next round
 * may come while this one's answer is being recorded), runs the platform's side, and answers with it.
 */
class MpcSessionRun {
  roundsDone = 0;
  answering = false;
  completed = false;
  /** Rounds whose Update handler has started and not yet ended (answering, or waiting its turn). */
  private readonly inFlight = new Set<number>();

  constructor(private readonly input: MpcSessionInput) {
    setHandler(mpcSessionStatus, () => ({ roundsDone: this.roundsDone, ended: this.completed }));
    setHandler(submitMpcRound, (submission) => this.takeRound(submission), { validator: (submission) => this.checkRound(submission) });
  }

  show(what: string) {
    setCurrentDetails(`**${this.input.kind === 'signing' ? 'Signing' : 'Key generation'}** — ${what}`);
  }

  private async takeRound(submission: MpcRoundNotice) {
    // The next round may come while this one's answer is being recorded, or in the same task as it
    // (a worker lost mid-round: the signer read that answer from the database, and the round's Update
    // is delivered again beside the next one): it waits its turn.
    this.inFlight.add(submission.round);
    try {
      await condition(() => !this.answering && (this.completed || submission.round <= this.roundsDone + 1 || !this.inFlight.has(submission.round - 1)));
      if (this.completed || submission.round !== this.roundsDone + 1) throw new Error(`Round ${this.roundsDone + 1} is due, not round ${submission.round}`);
      return await this.answerRound(submission.round);
    } finally {
      this.inFlight.delete(submission.round);
    }
  }

  private checkRound(submission: MpcRoundNotice) {
    if (this.completed) throw new Error('The session has completed');
    const due = this.roundsDone + 1;
    if (this.answering && submission.round === due) throw new Error(`The platform is answering round ${due} of this session; send it again once it answered`);
    if (submission.round !== due && !(this.inFlight.has(due) && submission.round === due + 1)) throw new Error(`Round ${due} is due, not round ${submission.round}`);
  }

  /** Runs the platform's side of a round and answers the signer with it. */
  private async answerRound(round: number) {
    this.answering = true;
    try {
      const rounds = this.input.kind === 'signing' ? signingRounds : platformRounds;
      const answer = await rounds.answerCustomerRound({ sessionId: this.input.sessionId, round });
      this.roundsDone = round;
      this.completed = answer.status === 'completed';
      this.show(this.completed ? 'Completed' : `Waiting for the customer's signer: round ${this.roundsDone + 1} of ${LAST_ROUND}`);
      return answer;
    } catch (err) {
      const reason = invalidDataReason(err);
      if (reason) throw ApplicationFailure.create({ type: FAILURE.InvalidData, message: `Refused: ${reason}`, nonRetryable: true });
      throw err;
    } finally {
      this.answering = false;
    }
  }
}

/** A signing looks, while it waits, whether its transaction's nonce was used by another transaction. */
const SIGNING_WATCHES_NONCE = 'mpc-signing-watches-nonce';

/**
 * Waits for the customer's co-signature until the session expires, looking meanwhile whether the
 * wallet's nonce was used by a transaction the platform never signed (a recovery by the customer's
 * two shares): the session then ends canceled at once, with why, instead of at its expiry. Undefined
 * when the time ran out; the session's end otherwise.
 */
async function waitForSignature(run: MpcSessionRun, input: MpcSessionInput): Promise<MpcSessionResult | undefined> {
  const expiresAt = Date.now() + input.expiresInMs;
  for (;;) {
    const { spent, checkAgainInMs } = await mpc.checkSigningNonce({ sessionId: input.sessionId });
    if (spent) {
      // A round being answered finishes first: a signature made meanwhile stands.
      await condition(() => !run.answering);
      if (run.completed) return { status: 'completed' };
      const closed = await mpc.closeUnfinishedMpcSession({ sessionId: input.sessionId, status: 'canceled', reason: spent });
      return closed ? { status: 'canceled', reason: spent } : { status: 'completed' };
    }
    const left = expiresAt - Date.now();
    if (left <= 0) return undefined;
    if (await condition(() => run.completed, Math.min(checkAgainInMs, left))) return { status: 'completed' };
  }
}

/**
 * `mpc-session:{id}`: one run of the 2-of-3 protocol between the platform and the customer's signer
 * (docs/MPC.md). The signer posts its rounds through the API, which delivers each as the
 * `submitMpcRound` Update; the platform's round runs as an activity (its state sealed in the
 * database between rounds) and the Update answers the platform's messages. A message refused by the
 * platform refuses the Update and changes nothing; the round can be sent again. The session expires
 * if the signer does not finish in time; it ends canceled if its transfer is canceled meanwhile, or
 * if a signing's nonce was used by another transaction.
 */
export async function mpcSessionWorkflow(input: MpcSessionInput): Promise<MpcSessionResult> {
  const run = new MpcSessionRun(input);
  await mpc.openPlatformParty({ sessionId: input.sessionId });
  run.show(`Waiting for the customer's signer: round 1 of ${LAST_ROUND}`);
  try {
    if (input.kind === 'signing' && patched(SIGNING_WATCHES_NONCE)) {
      const ended = await waitForSignature(run, input);
      if (ended) return ended;
    } else if (await condition(() => run.completed, input.expiresInMs)) return { status: 'completed' };
  } catch (err) {
    if (!isCancellation(err)) throw err;
    await CancellationScope.nonCancellable(() => mpc.closeUnfinishedMpcSession({ sessionId: input.sessionId, status: 'canceled', reason: 'canceled with its transfer' }));
    return { status: 'canceled', reason: 'canceled with its transfer' };
  }
  // A round being answered as time runs out finishes first: its answer stands.
  await condition(() => !run.answering);
  if (run.completed) return { status: 'completed' };
  const reason = `the customer's signer did not finish within ${Math.round(input.expiresInMs / 1000)} s`;
  const closed = await mpc.closeUnfinishedMpcSession({ sessionId: input.sessionId, status: 'expired', reason });
  return closed ? { status: 'expired', reason } : { status: 'completed' };
}
