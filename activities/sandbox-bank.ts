import { answerInbox, type SandboxBankSettings } from '../src/sandbox-bank/sandbox-bank';

/** The sandbox bank's one activity (`npm start` with SANDBOX_BANK=on): its inbox taken and answered. */
export function createSandboxBankActivities(bank: SandboxBankSettings) {
  return {
    async answerAsSandboxBank(): Promise<{ taken: string[]; answers: string[] }> {
      return answerInbox(bank);
    },
  };
}

export type SandboxBankActivities = ReturnType<typeof createSandboxBankActivities>;
