import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { PlatformAnswer } from '../src/mpc/sessions';

// The MPC session workflow's input and messages, importable without the workflow's code.

export const mpcSessionWorkflowId = (sessionId: string) => `mpc-session:${sessionId}`;

export interface MpcSessionInput {
  sessionId: string;
  kind: 'key_generation' | 'signing';
  /** The customer's signer must finish within this, else the session expires. */
  expiresInMs: number;
}

export interface MpcSessionResult {
  status: 'completed' | 'expired' | 'failed' | 'canceled';
  reason?: string;
}

export interface MpcSessionStatus {
  roundsDone: number;
  ended: boolean;
}

/** A customer round (its messages sealed to the platform, kept in the database): answered once the platform's round ran. */
export interface MpcRoundNotice {
  round: number;
}

export const submitMpcRound = defineUpdate<PlatformAnswer, [MpcRoundNotice]>('submitMpcRound');
export const mpcSessionStatus = defineQuery<MpcSessionStatus>('mpcSessionStatus');
