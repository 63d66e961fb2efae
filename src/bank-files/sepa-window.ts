import type { DataCipher } from '../crypto';
import type { Db } from '../db';
import type { Environment } from '../db/schema';
import type { BankFileRail } from '../config-bank-files';
import { RAILS, type FiatRailProfile } from '../domain/rails';
import { formatAmount } from '../domain/money';
import { buildPain001, MAX_SEPA_CREDIT_MINOR, sepaCreditProblem, type SepaCredit, type SepaDebtor } from '../providers/bank-files/sepa-messages';
import { bicCheck, ibanCheck } from '../domain/bank-validation';
import { sepaText } from '../providers/bank-files/rail-text';
import { fileWindow, openedOncePerWindow, receiverName, type FiledWindow, type QueuedPayment, type SetAside, type WindowFormat } from './file-window';

// A SEPA file window (docs/BANK_FILES.md): the payments queued for it in one pain.001.001.09 message.

export interface SepaWindowSettings {
  debtor: SepaDebtor;
  environment: Environment;
  rails: readonly BankFileRail[];
  settlementSeconds?: number;
}

/** A SEPA window's file: the day's `sequence`-th (from 0), and its message's id (what a status report names). */
const sepaFileName = (day: string, sequence: number) => `SCT-${day}-${sequence + 1}.xml`;
const sepaMessageId = (day: string, sequence: number) => `SCT${day}${String(sequence + 1).padStart(3, '0')}`;

/** The file whose message a status report answers, or null when the id is not one of ours. */
export function sepaFileOfMessage(messageId: string): string | null {
  const m = /^SCT(\d{8})(\d{3,})$/.exec(messageId);
  return m ? sepaFileName(m[1]!, Number(m[2]) - 1) : null;
}

function sepaFormat(settings: SepaWindowSettings, cipher: DataCipher): WindowFormat {
  const decrypt = openedOncePerWindow(cipher);
  return {
    fileRail: 'sepa',
    namePrefix: 'SCT',
    rails: settings.rails.includes('sepa') ? ['sepa'] : [],
    settlement: RAILS.sepa as FiatRailProfile,
    refusal: (p) => sepaRefusal(p, decrypt),
    name: ({ day, sequence }) => ({ name: sepaFileName(day, sequence), fileIdModifier: null }),
    build: async (payments, { now, effectiveDate, day, sequence }) => {
      const messageId = sepaMessageId(day, sequence);
      const built = buildPain001(settings.debtor, payments.map((p) => sepaCreditOf(p, decrypt)), { messageId, createdAt: now, executionDate: effectiveDate });
      return { text: built.text, totals: { entryCount: payments.length, entryHash: 0n, totalDebitMinor: 0n, totalCreditMinor: built.totalMinor } };
    },
  };
}

/** The credit transfer of a queued payment (one `sepaRefusal` let through); `decrypt` opens its IBAN. */
export function sepaCreditOf(p: QueuedPayment, decrypt: (sealed: string) => string): SepaCredit {
  return {
    endToEndId: p.entry_ref,
    amountMinor: BigInt(p.amount_minor),
    // In the EPC basic Latin set: transliterated, anything else a space (the original stays on the account).
    creditorName: sepaText(receiverName(p), 70) || 'ACCOUNT HOLDER',
    creditorIban: decrypt(p.number_encrypted!).replace(/\s+/g, '').toUpperCase(),
    creditorBic: p.bic!.replace(/\s+/g, '').toUpperCase(),
    remittance: sepaText(`${p.purpose === 'refund' ? 'REFUND' : 'PAYOUT'} ${p.reference ?? ''}`, 140),
  };
}

/**
 * Why a queued payment cannot be a SEPA credit transfer, named by the field: a credit to an IBAN
 * with its BIC only (a refund of a deposit whose sender we never saw has none), of an amount the
 * scheme carries (AM02 otherwise), and that the library writing the message takes (a BIC of the
 * IBAN's country, among others).
 */
export function sepaRefusal(p: QueuedPayment, decrypt: (sealed: string) => string): SetAside | null {
  if (p.direction !== 'credit' || p.purpose === 'deposit_return') return { code: 'AC01', reason: 'external_account_id: a SEPA file carries credit transfers to an account of the payee only' };
  if (p.type !== 'international_bank_account' || !p.number_encrypted) return { code: 'AC01', reason: 'external_account_id: no IBAN a SEPA file can pay' };
  const iban = ibanCheck(decrypt(p.number_encrypted));
  if ('error' in iban) return { code: 'AC01', reason: `iban ${iban.error}` };
  if (!p.bic || 'error' in bicCheck(p.bic)) return { code: 'RC01', reason: 'bic: no valid BIC of the payee\'s bank' };
  const amount = BigInt(p.amount_minor);
  if (amount <= 0n || amount > MAX_SEPA_CREDIT_MINOR) return { code: 'AM02', reason: `amount ${formatAmount(amount, 2)} is not a SEPA credit transfer amount (0.01 to 999,999,999.99)` };
  const problem = sepaCreditProblem(sepaCreditOf(p, decrypt));
  if (problem) return { code: /BIC/.test(problem) ? 'RC01' : 'AC01', reason: `external_account_id: the SEPA message cannot carry it: ${problem}` };
  return null;
}

/** Files the window's queued SEPA payments in one pain.001 (fileWindow: recorded with them, once per window). */
export function fileSepaWindow(db: Db, cipher: DataCipher, settings: SepaWindowSettings, window: { id: string }, now = new Date()): Promise<FiledWindow | null> {
  return fileWindow(db, cipher, settings, window, sepaFormat(settings, cipher), now);
}
