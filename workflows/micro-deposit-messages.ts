import { defineQuery, defineUpdate } from '@temporalio/workflow';

// The micro-deposit verification workflow's input and messages: what the API sends it, importable
// without the workflow's code (workflows/micro-deposit-verification.ts).

export interface MicroDepositInput {
  externalAccountId: string;
  customerId: string;
  /** How long the customer has to answer, from the moment the deposits settle. */
  expiryMs: number;
  maxAttempts: number;
  /**
   * The sandbox's instant verification, as test modes do it: the two deposits are the documented
   * test amounts (SANDBOX_TEST_AMOUNTS) and may be answered as soon as they are sent; they still
   * settle on the rail's schedule. Absent: random amounts, answered once settled.
   */
  instantSandbox?: boolean;
}

/** The sandbox's test amounts, in cents: 0.32 and 0.45. */
export const SANDBOX_TEST_AMOUNTS = [32, 45] as const;

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
