import path from 'node:path';
import type { Config } from '../config';
import type { SandboxBankSettings } from '../sandbox-bank/sandbox-bank';
import { startSftpServer, type SftpServer } from './sftp-server';

// `npm start` with SANDBOX_BANK=on (docs/BANK_FILES.md, "In the sandbox"): a local OpenSSH server
// whose folders the sandbox bank works (src/sandbox-bank), and the settings that send the sandbox's
// ACH and SEPA payments to it. A setting the developer gave is kept.

/** The sandbox bank's own accounts: an ODFI with a valid routing number, and a German account for SEPA. */
const SANDBOX_BANK_ACCOUNTS = {
  ACH_ODFI_ROUTING: '091000019', ACH_ODFI_NAME: 'SANDBOX BANK', ACH_COMPANY_ID: '1234567890', ACH_COMPANY_NAME: 'FINPLATFORM',
  ACH_COLLECTION_ACCOUNT: '9000012345',
  SEPA_DEBTOR_NAME: 'Financial Platform Sandbox', SEPA_DEBTOR_IBAN: 'DE89370400440532013000', SEPA_DEBTOR_BIC: 'COBADEFFXXX',
} as const;

/** Clocks for a developer who watches: a window every 30 s, entries settled a minute after their file. */
const SANDBOX_BANK_CLOCKS = { BANK_FILE_WINDOW_SECONDS: 30, BANK_FILE_SETTLEMENT_SECONDS: 60 } as const;

/** Starts the bank's SFTP server under DATA_DIR/bank and points the configuration at it. */
export async function startSandboxBank(config: Config, env: NodeJS.ProcessEnv = process.env): Promise<SftpServer> {
  const dir = path.join(config.dataDir, 'bank');
  const server = await startSftpServer({ dir, port: config.SANDBOX_BANK_SFTP_PORT, pidFile: path.join(dir, 'sftp-server.pid') });
  Object.assign(config, {
    SANDBOX_BANK_FILES: 'on', SANDBOX_BANK_DIR: server.root,
    BANK_SFTP_HOST: server.host, BANK_SFTP_PORT: server.port, BANK_SFTP_USER: server.username,
    BANK_SFTP_PRIVATE_KEY_FILE: server.privateKeyFile, BANK_SFTP_HOST_KEY: server.hostKey,
  } satisfies Partial<Config>);
  for (const [key, value] of Object.entries({ ...SANDBOX_BANK_ACCOUNTS, ...SANDBOX_BANK_CLOCKS })) {
    if (env[key] === undefined) Object.assign(config, { [key]: value });
  }
  // The outbox is read as often as the bank answers, unless the developer said otherwise.
  if (env.BANK_OUTBOX_POLL_SECONDS === undefined) config.BANK_OUTBOX_POLL_SECONDS = config.SANDBOX_BANK_POLL_SECONDS;
  return server;
}

/** The sandbox bank's folder and the platform's accounts at it, once npm start has filled them in; undefined otherwise. */
export function sandboxBankOf(config: Config): SandboxBankSettings | undefined {
  if (!config.SANDBOX_BANK_DIR) return undefined;
  return {
    root: config.SANDBOX_BANK_DIR,
    us: { account: config.ACH_COLLECTION_ACCOUNT!, bankId: config.ACH_ODFI_ROUTING!, customerId: config.ACH_COMPANY_ID!, name: config.ACH_COMPANY_NAME! },
    sepa: { iban: config.SEPA_DEBTOR_IBAN!, bic: config.SEPA_DEBTOR_BIC! },
  };
}
