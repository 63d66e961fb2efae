import { readFileSync } from 'node:fs';
import type { Config } from '../../config';
import { BANK_FILE_RAILS, isBankFileRail, type BankFileRail } from '../../config-bank-files';
import type { Environment } from '../../db/schema';
import type { AchOriginator } from './nacha';
import type { SepaDebtor } from './sepa-messages';
import type { SftpChannelSettings } from './sftp-channel';

export type BankFileConfig = Pick<Config,
  'RAIL_PROVIDERS' | 'SANDBOX_BANK_FILES' | 'BANK_SFTP_HOST' | 'BANK_SFTP_PORT' | 'BANK_SFTP_USER' | 'BANK_SFTP_PRIVATE_KEY_FILE'
  | 'BANK_SFTP_HOST_KEY' | 'BANK_SFTP_INBOX' | 'BANK_SFTP_OUTBOX' | 'ACH_ODFI_ROUTING' | 'ACH_ODFI_NAME' | 'ACH_COMPANY_ID' | 'ACH_COMPANY_NAME'
  | 'ACH_COLLECTION_ACCOUNT' | 'SEPA_DEBTOR_NAME' | 'SEPA_DEBTOR_IBAN' | 'SEPA_DEBTOR_BIC'>;

/**
 * The one environment whose payments go to the configured bank: live when RAIL_PROVIDERS names a
 * rail, else the sandbox when SANDBOX_BANK_FILES is on (the configuration refuses both at once, so
 * that sandbox payments never reach a live bank).
 */
export function bankFileEnvironment(config: Pick<Config, 'RAIL_PROVIDERS' | 'SANDBOX_BANK_FILES'>): Environment | undefined {
  if (Object.keys(config.RAIL_PROVIDERS).length > 0) return 'production';
  return config.SANDBOX_BANK_FILES === 'on' ? 'sandbox' : undefined;
}

/** The rails whose payments of `environment` go through the bank's files. */
export function bankFileRails(config: Pick<Config, 'RAIL_PROVIDERS' | 'SANDBOX_BANK_FILES'>, environment: Environment): BankFileRail[] {
  if (bankFileEnvironment(config) !== environment) return [];
  return environment === 'production' ? BANK_FILE_RAILS.filter((r) => config.RAIL_PROVIDERS[r] === 'bank_files') : [...BANK_FILE_RAILS];
}

export function bankFileRailFor(config: Pick<Config, 'RAIL_PROVIDERS' | 'SANDBOX_BANK_FILES'>, environment: Environment, rail: string): boolean {
  return isBankFileRail(rail) && bankFileRails(config, environment).includes(rail);
}

/** The SFTP account at the bank (the configuration has checked every value is there). */
export function sftpSettings(config: BankFileConfig): SftpChannelSettings {
  return {
    host: config.BANK_SFTP_HOST!,
    port: config.BANK_SFTP_PORT,
    username: config.BANK_SFTP_USER!,
    privateKey: readFileSync(config.BANK_SFTP_PRIVATE_KEY_FILE!, 'utf8'),
    hostKey: config.BANK_SFTP_HOST_KEY!,
    inbox: config.BANK_SFTP_INBOX,
    outbox: config.BANK_SFTP_OUTBOX,
  };
}

/** The platform's company at its ODFI, for the files' headers and batches. */
export function achOriginator(config: BankFileConfig): Omit<AchOriginator, 'entryDescription'> {
  return { odfiRouting: config.ACH_ODFI_ROUTING!, odfiName: config.ACH_ODFI_NAME!, companyId: config.ACH_COMPANY_ID!, companyName: config.ACH_COMPANY_NAME! };
}

/** The platform's account that pays SEPA credit transfers. */
export function sepaDebtor(config: BankFileConfig): SepaDebtor {
  return { name: config.SEPA_DEBTOR_NAME!, iban: config.SEPA_DEBTOR_IBAN!, bic: config.SEPA_DEBTOR_BIC! };
}

/**
 * Where customers send deposits on a rail that runs on the bank's files: our account at the bank
 * (deposit instructions). Undefined for the other rails, whose instructions are the sandbox's.
 */
export function bankCollectionAccount(config: BankFileConfig, environment: Environment, rail: string): Record<string, string> | undefined {
  if (!bankFileRailFor(config, environment, rail)) return undefined;
  if (rail === 'sepa') return { iban: config.SEPA_DEBTOR_IBAN!, bic: config.SEPA_DEBTOR_BIC!, bank_beneficiary_name: config.SEPA_DEBTOR_NAME! };
  return {
    bank_name: config.ACH_ODFI_NAME!, bank_routing_number: config.ACH_ODFI_ROUTING!, bank_account_number: config.ACH_COLLECTION_ACCOUNT!,
    bank_beneficiary_name: config.ACH_COMPANY_NAME!,
  };
}

/**
 * The daily reconciliation's settings (docs/RECONCILIATION.md): the environment whose bank account it
 * proves, its tolerances, and the accounts the bank sends a statement for each day (the US
 * collection account in BAI2, the SEPA account in camt.053, where their rails run on files).
 */
export function reconciliationSettings(config: Config) {
  const environment = bankFileEnvironment(config);
  const rails: string[] = environment ? bankFileRails(config, environment) : [];
  return {
    environment: environment ?? 'production',
    tolerances: { shortfallMinor: config.RECONCILIATION_CREDIT_SHORTFALL, days: config.RECONCILIATION_DAYS },
    accounts: [
      ...rails.some((r) => r.startsWith('ach')) && config.ACH_COLLECTION_ACCOUNT ? [{ account: config.ACH_COLLECTION_ACCOUNT, rail: 'ach' as const }] : [],
      ...rails.includes('sepa') && config.SEPA_DEBTOR_IBAN ? [{ account: config.SEPA_DEBTOR_IBAN, rail: 'sepa' as const }] : [],
    ],
  };
}
