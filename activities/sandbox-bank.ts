import { writeStatements } from '../src/sandbox-bank/book';
import { runSandboxBank, type SandboxBankSettings } from '../src/sandbox-bank/sandbox-bank';

/** The sandbox bank's activities (`npm start` with SANDBOX_BANK=on): the credits asked for sent, its inbox taken and answered; its end-of-day statements. */
export function createSandboxBankActivities(bank: SandboxBankSettings) {
  return {
    async answerAsSandboxBank(): Promise<{ taken: string[]; answers: string[] }> {
      return runSandboxBank(bank);
    },
    async writeSandboxBankStatements(): Promise<string[]> {
      return writeStatements(bank, new Date());
    },
  };
}

export type SandboxBankActivities = ReturnType<typeof createSandboxBankActivities>;
