import { Context } from '@temporalio/activity';
import type { ChainAdapters } from '../src/chains';
import type { Db } from '../src/db';
import type { KeyVault } from '../src/keys/key-vault';
import { answerCustomerRound, openPlatformParty } from '../src/mpc/platform-party';
import { closeUnfinishedSession, openTransferSigning } from '../src/mpc/signing';

/** The platform's party of MPC sessions (its share and state opened only here), and the signing requests of transfers. */
export function createMpcActivities(deps: { db: Db; keys: KeyVault; chains: ChainAdapters }) {
  return {
    openPlatformParty(input: { sessionId: string }) {
      return openPlatformParty(deps, input.sessionId);
    },

    /**
     * A refused message (foreign, replayed, out of order, altered) fails at once and changes nothing:
     * its MpcProtocolError is non-retryable InvalidData (activities/failures.ts), and the Update is refused.
     */
    async answerCustomerRound(input: { sessionId: string; round: number }) {
      // Key generation's rounds beat (a lost worker is noticed soon); a local activity (signing) has no heartbeat.
      const beat = () => (Context.current().info.isLocal ? undefined : Context.current().heartbeat());
      beat();
      return answerCustomerRound(deps, input.sessionId, input.round, beat);
    },

    closeUnfinishedMpcSession(input: { sessionId: string; status: 'failed' | 'expired' | 'canceled'; reason: string }) {
      return closeUnfinishedSession(deps.db, input.sessionId, input.status, input.reason);
    },

    /** The transfer's signing session, with its unsigned transaction; the chain's refusal (too little to send) is final. */
    async openTransferSigning(input: { transferId: string; expiresInMs: number }) {
      return openTransferSigning(deps, input.transferId, input.expiresInMs);
    },
  };
}

export type MpcActivities = ReturnType<typeof createMpcActivities>;
