import type { DataCipher } from '../crypto';
import type { Db } from '../db';
import type { Environment } from '../db/schema';
import type { BankFileRail } from '../config-bank-files';
import { RAILS, type FiatRailProfile } from '../domain/rails';
import { buildPain001, type SepaDebtor } from '../providers/bank-files/sepa-messages';
import { fileWindow, receiverName, type FiledWindow, type WindowFormat } from './file-window';

// A SEPA file window (docs/BANK_FILES.md): the payments queued for it in one pain.001.001.09 message.

export interface SepaWindowSettings {
  debtor: SepaDebtor;
  environment: Environment;
  rails: readonly BankFileRail[];
  settlementSeconds?: number;
}

function sepaFormat(settings: SepaWindowSettings, cipher: DataCipher): WindowFormat {
  return {
    fileRail: 'sepa',
    namePrefix: 'SCT',
    rails: settings.rails.includes('sepa') ? ['sepa'] : [],
    settlement: RAILS.sepa as FiatRailProfile,
    // Credit transfers only, to an IBAN with its BIC (a refund of a deposit whose sender we never saw has none).
    fileable: (p) => Boolean(p.type === 'international_bank_account' && p.number_encrypted && p.bic && p.direction === 'credit' && p.purpose !== 'deposit_return'),
    name: ({ day, sequence }) => ({ name: `SCT-${day}-${sequence + 1}.xml`, fileIdModifier: null }),
    build: async (payments, { now, effectiveDate, day, sequence }) => {
      const messageId = `SCT${day}${String(sequence + 1).padStart(3, '0')}`;
      const built = buildPain001(settings.debtor, payments.map((p) => ({
        endToEndId: p.entry_ref,
        amountMinor: BigInt(p.amount_minor),
        creditorName: receiverName(p),
        creditorIban: cipher.decryptText(p.number_encrypted!),
        creditorBic: p.bic!,
        remittance: `${p.purpose === 'refund' ? 'REFUND' : 'PAYOUT'} ${p.reference ?? ''}`.trim(),
      })), { messageId, createdAt: now, executionDate: effectiveDate });
      return { text: built.text, totals: { entryCount: payments.length, entryHash: 0n, totalDebitMinor: 0n, totalCreditMinor: built.totalMinor } };
    },
  };
}

/** Files the window's queued SEPA payments in one pain.001 (fileWindow: recorded with them, once per window). */
export function fileSepaWindow(db: Db, cipher: DataCipher, settings: SepaWindowSettings, window: { id: string }, now = new Date()): Promise<FiledWindow | null> {
  return fileWindow(db, cipher, settings, window, sepaFormat(settings, cipher), now);
}
