import {
  condition, patched, proxyActivities, proxyLocalActivities, setCurrentDetails, setHandler, sleep, upsertSearchAttributes,
} from '@temporalio/workflow';
import type { AchRailActivities } from '../activities/ach-rail';
import type { ExternalAccountActivities } from '../activities/external-accounts-database';
import { ExternalAccountStatusAttr } from '../src/temporal/search-attributes';
import {
  SANDBOX_TEST_AMOUNTS, verificationState, verifyMicroDeposits, type MicroDepositInput, type VerificationPhase, type VerificationState, type VerifyResult,
} from './micro-deposit-messages';

const rail = proxyActivities<AchRailActivities>({
  // A rail call takes a moment; a short timeout means a payment lost with a crashed worker is retried
  // within seconds (safely: the idempotency key makes the retry the same payment).
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});
const { recordVerificationOutcome } = proxyLocalActivities<ExternalAccountActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds' },
});

/**
 * One verification's state and the customer's answers: taken one at a time (so concurrent calls
 * never lose an attempt), each compared with the amounts sent.
 */
class MicroDepositRun {
  readonly state: VerificationState;
  /** Workflow randomness is seeded by Temporal: replays draw the same amounts. */
  readonly amounts: number[];
  busy = false;

  constructor(private readonly input: MicroDepositInput) {
    this.amounts = input.instantSandbox ? [...SANDBOX_TEST_AMOUNTS] : [1 + Math.floor(Math.random() * 49), 1 + Math.floor(Math.random() * 49)];
    this.state = { phase: 'sending', attemptsRemaining: input.maxAttempts };
    setHandler(verificationState, () => this.state);
    setHandler(verifyMicroDeposits, (answer) => this.takeAnswer(answer), { validator: (answer) => this.checkAnswer(answer) });
  }

  private async takeAnswer(answer: number[]): Promise<VerifyResult> {
    const { state, input } = this;
    await condition(() => !this.busy);
    this.busy = true;
    try {
      if (state.phase !== 'awaiting_amounts') {
        return { result: state.phase === 'verified' ? 'verified' : 'verification_failed', attempts_remaining: state.attemptsRemaining };
      }
      const correct = [...answer].sort((a, b) => a - b).join() === [...this.amounts].sort((a, b) => a - b).join();
      if (correct) {
        await recordVerificationOutcome({ externalAccountId: input.externalAccountId, outcome: 'verified' });
        state.phase = 'verified';
        return { result: 'verified', attempts_remaining: state.attemptsRemaining };
      }
      state.attemptsRemaining--;
      if (state.attemptsRemaining === 0) {
        await recordVerificationOutcome({ externalAccountId: input.externalAccountId, outcome: 'verification_failed', reason: 'too_many_attempts' });
        state.phase = 'verification_failed';
        state.failureReason = 'too_many_attempts';
        return { result: 'verification_failed', attempts_remaining: 0 };
      }
      setCurrentDetails(`Waiting for the customer's amounts: ${state.attemptsRemaining} attempts left`);
      return { result: 'incorrect', attempts_remaining: state.attemptsRemaining };
    } finally {
      this.busy = false;
    }
  }

  private checkAnswer(answer: number[]): void {
    if (!Array.isArray(answer) || answer.length !== 2) throw new Error('Two amounts are expected');
    if (this.state.phase === 'sending' || this.state.phase === 'settling') throw new Error('The micro-deposits have not settled yet');
    if (this.state.phase !== 'awaiting_amounts') throw new Error(`Verification is already final: ${this.state.phase}`);
  }
}

/**
 * `external-account-verification:{id}`: two random credits of 0.01–0.49 over ACH, a wait for them
 * to settle (in the sandbox's instant mode: the test amounts, no wait), then the customer's answer (an Update, so the caller learns the outcome at once).
 * Three wrong answers or no answer before the expiry fail it; success recovers both credits in
 * one debit. Every payment carries a key derived from the account and the step, so a worker crash
 * at any point neither sends a third deposit nor loses an attempt (attempts live in history).
 */
/** Waits until both micro-deposits settled; the receiving bank's code if one was rejected or returned. */
async function untilMicroDepositsSettle(paymentIds: string[]): Promise<string | undefined> {
  for (;;) {
    const outcome = await rail.microDepositsOutcome({ paymentIds });
    if (outcome.failedCode) return outcome.failedCode;
    if (outcome.settled) return undefined;
    await sleep('1 second');
  }
}

async function failVerification(input: MicroDepositInput, state: VerificationState, reason: string): Promise<VerificationState> {
  state.phase = 'verification_failed';
  state.failureReason = reason;
  await recordVerificationOutcome({ externalAccountId: input.externalAccountId, outcome: 'verification_failed', reason });
  upsertSearchAttributes([{ key: ExternalAccountStatusAttr, value: 'verification_failed' }]);
  setCurrentDetails(`Verification failed: ${reason}`);
  return state;
}

export async function microDepositVerificationWorkflow(input: MicroDepositInput): Promise<VerificationState> {
  const run = new MicroDepositRun(input);
  const { state, amounts } = run;

  upsertSearchAttributes([{ key: ExternalAccountStatusAttr, value: 'pending_verification' }]);
  setCurrentDetails('Sending two micro-deposits over ACH');
  const payments = [];
  for (let i = 0; i < 2; i++) payments.push(await rail.sendMicroDeposit({ externalAccountId: input.externalAccountId, index: i, amountMinor: amounts[i] }));

  if (!input.instantSandbox) {
    state.phase = 'settling';
    setCurrentDetails('Waiting for the micro-deposits to settle');
    const settlesAt = Math.max(...payments.map((p) => p.settlesAt));
    await sleep(Math.max(0, settlesAt - Date.now()));
    const paymentIds = payments.map((p) => p.paymentId);
    if (patched('micro-deposit-returns')) {
      // A micro-deposit the receiving bank sends back (no such account) fails the verification.
      const failedCode = await untilMicroDepositsSettle(paymentIds);
      if (failedCode) return failVerification(input, state, `micro_deposit_returned_${failedCode}`);
    } else {
      while (!(await rail.paymentsSettled({ paymentIds }))) await sleep('1 second');
    }
  }

  state.phase = 'awaiting_amounts';
  setCurrentDetails(`Waiting for the customer's amounts: ${state.attemptsRemaining} attempts left`);
  const answered = await condition(() => state.phase === 'verified' || state.phase === 'verification_failed', input.expiryMs);
  if (!answered) {
    await condition(() => !run.busy);
    if (state.phase === 'awaiting_amounts') {
      state.phase = 'verification_failed';
      state.failureReason = 'expired';
      await recordVerificationOutcome({ externalAccountId: input.externalAccountId, outcome: 'verification_failed', reason: 'expired' });
    }
  }
  // Read through a fresh variable: the update handler changed the phase behind the compiler's back.
  const outcome = state.phase as VerificationPhase;
  upsertSearchAttributes([{ key: ExternalAccountStatusAttr, value: outcome }]);
  if (outcome === 'verified') {
    setCurrentDetails('Verified; recovering the micro-deposits');
    await rail.recoverMicroDeposits({ externalAccountId: input.externalAccountId, amountMinor: amounts[0] + amounts[1] });
  }
  setCurrentDetails(outcome === 'verified' ? 'Verified' : `Verification failed: ${state.failureReason}`);
  return state;
}
