import { Context } from '@temporalio/activity';
import type { ChainAdapters } from '../src/chains';
import type { Db } from '../src/db';
import type { KeyVault } from '../src/keys/key-vault';
import { answerCustomerRound, openPlatformParty } from '../src/mpc/platform-party';
import { closeUnfinishedSession, openTransferSigning, spentSigningNonce } from '../src/mpc/signing';

/** The platform's party of MPC sessions (its share and state opened only here), and the signing requests of transfers. */
export function createMpcActivities(deps: { db: Db; keys: KeyVault; chains: ChainAdapters; nonceCheckMs: number }) {
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

    /**
     * Why a signing session's transaction can no longer be mined (`spent`), if so; and when to look
     * again while the customer's signer has not finished.
     */
    async checkSigningNonce(input: { sessionId: string }) {
      // A chain that does not answer now is looked at next time: the wait for the signature goes on meanwhile.
      const spent = await spentSigningNonce(deps, input.sessionId).catch((err: unknown) => {
        Context.current().log.warn('could not look at the signing nonce', { sessionId: input.sessionId, error: String(err) });
        return undefined;
      });
      return { spent, checkAgainInMs: deps.nonceCheckMs };
    },

    /** The transfer's signing session, with its unsigned transaction; the chain's refusal (too little to send) is final. */
    async openTransferSigning(input: { transferId: string; expiresInMs: number }) {
      return openTransferSigning(deps, input.transferId, input.expiresInMs);
    },
  };
}

export type MpcActivities = ReturnType<typeof createMpcActivities>;
