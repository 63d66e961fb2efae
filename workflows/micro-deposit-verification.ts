import {
  condition, defineQuery, defineUpdate, proxyActivities, proxyLocalActivities, setCurrentDetails, setHandler, sleep, upsertSearchAttributes,
} from '@temporalio/workflow';
import type { AchRailActivities } from '../activities/ach-rail';
import type { ExternalAccountActivities } from '../activities/external-accounts-database';
import { ExternalAccountStatusAttr } from '../src/temporal/search-attributes';

export interface MicroDepositInput {
  externalAccountId: string;
  customerId: string;
  /** How long the customer has to answer, from the moment the deposits settle. */
  expiryMs: number;
  maxAttempts: number;
}

export type VerificationPhase = 'sending' | 'settling' | 'awaiting_amounts' | 'verified' | 'verification_failed';

export interface VerifyResult {
  result: 'verified' | 'incorrect' | 'verification_failed';
  attempts_remaining: number;
}

export interface VerificationState {
  phase: VerificationPhase;
  attemptsRemaining: number;
  failureReason?: string;
}

/** The customer's answer: the two amounts in cents, in any order. */
export const verifyMicroDeposits = defineUpdate<VerifyResult, [number[]]>('verifyMicroDeposits');
export const verificationState = defineQuery<VerificationState>('verificationState');

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
 * `external-account-verification:{id}`: two random credits of 0.01–0.49 over ACH, a wait for them
 * to settle, then the customer's answer (an Update, so the caller learns the outcome at once).
 * Three wrong answers or no answer before the expiry fail it; success recovers both credits in
 * one debit. Every payment carries a key derived from the account and the step, so a worker crash
 * at any point neither sends a third deposit nor loses an attempt (attempts live in history).
 */
export async function microDepositVerificationWorkflow(input: MicroDepositInput): Promise<VerificationState> {
  const state: VerificationState = { phase: 'sending', attemptsRemaining: input.maxAttempts };
  // Workflow randomness is seeded by Temporal: replays draw the same amounts.
  const amounts = [1 + Math.floor(Math.random() * 49), 1 + Math.floor(Math.random() * 49)];
  let busy = false;

  setHandler(verificationState, () => state);
  setHandler(
    verifyMicroDeposits,
    async (answer) => {
      // Answers are taken one at a time, so concurrent calls never lose an attempt.
      await condition(() => !busy);
      busy = true;
      try {
        if (state.phase !== 'awaiting_amounts') {
          return { result: state.phase === 'verified' ? 'verified' : 'verification_failed', attempts_remaining: state.attemptsRemaining } as VerifyResult;
        }
        const correct = [...answer].sort((a, b) => a - b).join() === [...amounts].sort((a, b) => a - b).join();
        if (correct) {
          await recordVerificationOutcome({ externalAccountId: input.externalAccountId, outcome: 'verified' });
          state.phase = 'verified';
          return { result: 'verified', attempts_remaining: state.attemptsRemaining } as VerifyResult;
        }
        state.attemptsRemaining--;
        if (state.attemptsRemaining === 0) {
          await recordVerificationOutcome({ externalAccountId: input.externalAccountId, outcome: 'verification_failed', reason: 'too_many_attempts' });
          state.phase = 'verification_failed';
          state.failureReason = 'too_many_attempts';
          return { result: 'verification_failed', attempts_remaining: 0 } as VerifyResult;
        }
        setCurrentDetails(`Waiting for the customer's amounts: ${state.attemptsRemaining} attempts left`);
        return { result: 'incorrect', attempts_remaining: state.attemptsRemaining } as VerifyResult;
      } finally {
        busy = false;
      }
    },
    {
      validator: (answer) => {
        if (!Array.isArray(answer) || answer.length !== 2) throw new Error('Two amounts are expected');
        if (state.phase === 'sending' || state.phase === 'settling') throw new Error('The micro-deposits have not settled yet');
        if (state.phase !== 'awaiting_amounts') throw new Error(`Verification is already final: ${state.phase}`);
      },
    },
  );

  upsertSearchAttributes([{ key: ExternalAccountStatusAttr, value: 'pending_verification' }]);
  setCurrentDetails('Sending two micro-deposits over ACH');
  const payments = [];
  for (let i = 0; i < 2; i++) payments.push(await rail.sendMicroDeposit({ externalAccountId: input.externalAccountId, index: i, amountMinor: amounts[i] }));

  state.phase = 'settling';
  setCurrentDetails('Waiting for the micro-deposits to settle');
  const settlesAt = Math.max(...payments.map((p) => p.settlesAt));
  await sleep(Math.max(0, settlesAt - Date.now()));
  while (!(await rail.paymentsSettled({ paymentIds: payments.map((p) => p.paymentId) }))) await sleep('1 second');

  state.phase = 'awaiting_amounts';
  setCurrentDetails(`Waiting for the customer's amounts: ${state.attemptsRemaining} attempts left`);
  const answered = await condition(() => state.phase === 'verified' || state.phase === 'verification_failed', input.expiryMs);
  if (!answered) {
    await condition(() => !busy);
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
