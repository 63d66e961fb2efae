import { z } from 'zod';
import { FIAT_RAILS, type FiatRail } from './domain/rails';
import { parseAmountOrZero } from './domain/money';

/**
 * Configuration of the fiat rails that run through the bank's file interface (docs/BANK_FILES.md,
 * docs/CONFIGURATION.md): which rails, the SFTP account, the ODFI and company, and the windows.
 */

/** The rails that run through the bank's files; the others have no live provider. */
export const BANK_FILE_RAILS = ['ach', 'ach_push', 'ach_same_day', 'sepa'] as const satisfies readonly FiatRail[];
const ACH_RAILS: readonly BankFileRail[] = ['ach', 'ach_push', 'ach_same_day'];
export type BankFileRail = (typeof BANK_FILE_RAILS)[number];
export const isBankFileRail = (rail: string): rail is BankFileRail => (BANK_FILE_RAILS as readonly string[]).includes(rail);

const optionalText = () => z.string().trim().optional().transform((v) => (v === '' ? undefined : v));

/** Cron expressions separated by `;`, each of five fields. */
const cronList = (fallback: string) => z.string().default(fallback).transform((v, ctx) => {
  const crons = v.split(';').map((c) => c.trim()).filter(Boolean);
  const bad = crons.find((c) => c.split(/\s+/).length !== 5);
  if (bad !== undefined || crons.length === 0) {
    ctx.addIssue({ code: 'custom', message: `'${bad ?? v}' is not a list of five-field cron expressions separated by ';'` });
    return z.NEVER;
  }
  return crons;
});

export const bankFileEnv = {
  /**
   * Which live fiat rails run on which provider: "ach=bank_files,ach_same_day=bank_files". A rail not
   * named has no live provider (503 to live keys). Only the bank's file interface exists today.
   */
  RAIL_PROVIDERS: z.string().optional().transform((v, ctx) => {
    const out: Partial<Record<BankFileRail, 'bank_files'>> = {};
    for (const part of (v ?? '').split(',').map((p) => p.trim()).filter(Boolean)) {
      const [rail, provider] = part.split('=');
      if (!isBankFileRail(rail) || provider !== 'bank_files') {
        ctx.addIssue({ code: 'custom', message: `'${part}' is not rail=bank_files for a rail with a file interface (${BANK_FILE_RAILS.join(', ')}); ${FIAT_RAILS.filter((r) => !isBankFileRail(r)).join(', ')} have no live provider yet` });
        return z.NEVER;
      }
      out[rail] = provider;
    }
    return out;
  }),
  /** The sandbox's ACH rails run through the bank's files too (a developer sees the files); default: the instant simulator. */
  SANDBOX_BANK_FILES: z.enum(['on', 'off']).default('off'),
  /**
   * `npm start` runs a local SFTP server and the sandbox bank behind it, and the sandbox's ACH and
   * SEPA rails through their files (SANDBOX_BANK_FILES and the bank's settings are filled in).
   */
  SANDBOX_BANK: z.enum(['on', 'off']).default('off'),
  /** The sandbox bank's SFTP server's port (loopback only). */
  SANDBOX_BANK_SFTP_PORT: z.coerce.number().int().min(1).max(65535).default(2222),
  /** How often the sandbox bank takes the files in its inbox and answers them. */
  SANDBOX_BANK_POLL_SECONDS: z.coerce.number().int().min(1).max(3_600).default(2),
  /** When the sandbox bank writes its end-of-day statements (cron, in BANK_FILE_WINDOW_TIMEZONE). */
  SANDBOX_BANK_STATEMENTS: cronList('0 22 * * *'),
  /** The statements instead every this many seconds (tests and demonstrations). */
  SANDBOX_BANK_STATEMENT_SECONDS: z.coerce.number().int().min(1).max(86_400).optional(),
  /** Reconciliation: how much less than expected a credit may arrive and still match (a correspondent's fee on a wire), in the account's currency. */
  RECONCILIATION_CREDIT_SHORTFALL: z.string().default('0').transform((v, ctx) => {
    const minor = parseAmountOrZero(v.trim(), 2);
    if (minor === null) {
      ctx.addIssue({ code: 'custom', message: `'${v}' is not an amount with at most 2 decimals` });
      return z.NEVER;
    }
    return minor;
  }),
  /** Reconciliation: how many days a statement line's date may be from the books' for a match without a reference. */
  RECONCILIATION_DAYS: z.coerce.number().int().min(0).max(10).default(2),
  /**
   * When the daily reconciliation runs (cron, in BANK_FILE_WINDOW_TIMEZONE): the hour by which the
   * bank's statements are due; an account without one then raises the alarm.
   */
  RECONCILIATION_HOURS: cronList('0 8 * * *'),
  /** The daily reconciliation instead every this many seconds (tests and demonstrations). */
  RECONCILIATION_SECONDS: z.coerce.number().int().min(1).max(86_400).optional(),
  /** The sandbox bank's folder (the SFTP server's root, with `inbox` and `outbox`): set by `npm start`. */
  SANDBOX_BANK_DIR: optionalText(),
  BANK_SFTP_HOST: optionalText(),
  BANK_SFTP_PORT: z.coerce.number().int().min(1).max(65535).default(22),
  BANK_SFTP_USER: optionalText(),
  /** Our private key for the bank's SFTP server (a file, OpenSSH format). */
  BANK_SFTP_PRIVATE_KEY_FILE: optionalText(),
  /** The bank's host key, pinned: an OpenSSH public key line (`ssh-ed25519 AAAA…`). */
  BANK_SFTP_HOST_KEY: optionalText(),
  BANK_SFTP_INBOX: z.string().trim().min(1).default('inbox'),
  BANK_SFTP_OUTBOX: z.string().trim().min(1).default('outbox'),
  /** The ODFI: its routing number (9 digits) and name, and the company id and name it assigned us. */
  ACH_ODFI_ROUTING: optionalText().refine((v) => v === undefined || /^\d{9}$/.test(v), { message: 'must be 9 digits' }),
  ACH_ODFI_NAME: optionalText(),
  ACH_COMPANY_ID: optionalText().refine((v) => v === undefined || /^[0-9A-Z ]{10}$/.test(v), { message: 'must be 10 characters (digits, capitals)' }),
  ACH_COMPANY_NAME: optionalText(),
  /** Our account at the ODFI that customers' ACH credits go to (their deposit instructions show it). */
  ACH_COLLECTION_ACCOUNT: optionalText().refine((v) => v === undefined || /^\d{4,17}$/.test(v), { message: 'must be 4 to 17 digits' }),
  /** The platform's account that pays SEPA credit transfers: name, IBAN and BIC; and its SEPA creditor id (direct debits). */
  SEPA_DEBTOR_NAME: optionalText(),
  SEPA_DEBTOR_IBAN: optionalText(),
  SEPA_DEBTOR_BIC: optionalText().refine((v) => v === undefined || /^[A-Z0-9]{8}([A-Z0-9]{3})?$/.test(v), { message: 'must be a BIC of 8 or 11 characters' }),
  SEPA_CREDITOR_ID: optionalText(),
  /** When SEPA files go out (cron, in SEPA_WINDOW_TIMEZONE): before the bank's cut-off for next-day execution. */
  SEPA_WINDOWS: cronList('0 13 * * 1-5'),
  SEPA_WINDOW_TIMEZONE: z.string().default('Europe/Brussels'),
  /** When standard ACH files go out (cron, in BANK_FILE_WINDOW_TIMEZONE): once a business day. */
  ACH_STANDARD_WINDOWS: cronList('0 17 * * 1-5'),
  /** When same-day ACH files go out: before Nacha's three same-day deadlines (10:30, 14:45, 16:45 ET). */
  ACH_SAME_DAY_WINDOWS: cronList('15 10 * * 1-5;30 14 * * 1-5;30 16 * * 1-5'),
  BANK_FILE_WINDOW_TIMEZONE: z.string().default('America/New_York'),
  /** Every window instead runs this often (seconds): tests and demonstrations. */
  BANK_FILE_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).optional(),
  /**
   * The longest wait between two tries of a failing upload (1 s at first, doubling). The
   * stuck-activity alarm rises after 8 tries: about 2 minutes at the default.
   */
  BANK_UPLOAD_RETRY_MAX_SECONDS: z.coerce.number().int().min(1).max(3_600).default(60),
  /** How often the bank's outbox is read. */
  BANK_OUTBOX_POLL_SECONDS: z.coerce.number().int().min(1).max(86_400).default(300),
  /**
   * An uploaded entry counts as settled this many seconds after its upload instead of on its
   * effective date (tests and demonstrations, where a business day is too long to wait).
   */
  BANK_FILE_SETTLEMENT_SECONDS: z.coerce.number().int().min(0).max(7 * 86_400).optional(),
};

/**
 * The settings the bank-file rails in use need, by name, that are missing: the SFTP account, and the
 * ODFI's for ACH or the debtor account's for SEPA.
 */
export function missingBankFileSettings(c: Record<string, unknown> & { RAIL_PROVIDERS: Partial<Record<BankFileRail, 'bank_files'>>; SANDBOX_BANK_FILES: 'on' | 'off' }): string[] {
  const rails = c.SANDBOX_BANK_FILES === 'on' ? BANK_FILE_RAILS : BANK_FILE_RAILS.filter((r) => c.RAIL_PROVIDERS[r]);
  const required = [
    'BANK_SFTP_HOST', 'BANK_SFTP_USER', 'BANK_SFTP_PRIVATE_KEY_FILE', 'BANK_SFTP_HOST_KEY',
    ...(rails.some((r) => ACH_RAILS.includes(r)) ? ['ACH_ODFI_ROUTING', 'ACH_ODFI_NAME', 'ACH_COMPANY_ID', 'ACH_COMPANY_NAME', 'ACH_COLLECTION_ACCOUNT'] : []),
    ...(rails.includes('sepa') ? ['SEPA_DEBTOR_NAME', 'SEPA_DEBTOR_IBAN', 'SEPA_DEBTOR_BIC'] : []),
  ];
  return required.filter((k) => c[k] === undefined);
}

type BankFileCheckedConfig = Record<string, unknown> & {
  RAIL_PROVIDERS: Partial<Record<BankFileRail, 'bank_files'>>; SANDBOX_BANK_FILES: 'on' | 'off'; SANDBOX_BANK: 'on' | 'off';
};

/**
 * The bank-file settings hold together: every setting the rails in use need (npm start fills them
 * for the sandbox bank), and one bank only: sandbox payments never reach the bank that carries live ones.
 */
export function checkBankFileSettings(c: BankFileCheckedConfig, ctx: z.RefinementCtx) {
  if (bankFilesEnabled(c) && c.SANDBOX_BANK === 'off') {
    for (const key of missingBankFileSettings(c)) {
      ctx.addIssue({ code: 'custom', path: [key], message: 'is required when RAIL_PROVIDERS or SANDBOX_BANK_FILES uses the bank\'s files' });
    }
  }
  for (const key of ['SANDBOX_BANK_FILES', 'SANDBOX_BANK'] as const) {
    if (c[key] === 'on' && Object.keys(c.RAIL_PROVIDERS).length > 0) {
      ctx.addIssue({ code: 'custom', path: [key], message: 'cannot be on while RAIL_PROVIDERS sends live payments to the bank' });
    }
  }
}

/** Whether the bank-file rail runs at all: a live rail names it, or the sandbox asks for it. */
export function bankFilesEnabled(c: { RAIL_PROVIDERS: Partial<Record<BankFileRail, 'bank_files'>>; SANDBOX_BANK_FILES: 'on' | 'off' }): boolean {
  return Object.keys(c.RAIL_PROVIDERS).length > 0 || c.SANDBOX_BANK_FILES === 'on';
}
