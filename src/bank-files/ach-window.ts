import type { DataCipher } from '../crypto';
import type { Db } from '../db';
import type { Environment } from '../db/schema';
import type { BankFileRail } from '../config-bank-files';
import { RAILS, type FiatRailProfile } from '../domain/rails';
import { buildAchFile, type AchEntry, type AchOriginator } from '../providers/bank-files/nacha';
import { fileWindow, receiverName, type FiledWindow, type WindowFormat } from './file-window';

// An ACH file window (docs/BANK_FILES.md): the payments queued for it in one NACHA file.

/** Standard ACH settles the next business day; same-day ACH the same day. */
export const ACH_WINDOWS = { ach_standard: ['ach', 'ach_push'], ach_same_day: ['ach_same_day'] } as const satisfies Record<string, readonly BankFileRail[]>;
export type AchWindow = keyof typeof ACH_WINDOWS;

export interface AchWindowSettings {
  originator: Omit<AchOriginator, 'entryDescription'>;
  /** The environment whose payments go to this bank, and its rails that run on files. */
  environment: Environment;
  rails: readonly BankFileRail[];
  /** Settle this long after the window instead of on the effective date (tests, demonstrations). */
  settlementSeconds?: number;
}

/** File id modifiers in the order NACHA uses them: one file per modifier per day. */
const MODIFIERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const DESCRIPTIONS: Record<string, string> = {
  micro_deposit: 'ACCTVERIFY', micro_deposit_recovery: 'ACCTVERIFY', payout: 'PAYOUT', refund: 'REFUND',
};

function achFormat(settings: AchWindowSettings, cipher: DataCipher, kind: AchWindow): WindowFormat {
  const rails = ACH_WINDOWS[kind].filter((r) => settings.rails.includes(r));
  return {
    fileRail: 'ach',
    namePrefix: 'ACH',
    rails,
    settlement: RAILS[ACH_WINDOWS[kind][0]] as FiatRailProfile,
    fileable: (p) => Boolean(p.routing_number && p.number_encrypted && p.type === 'us_bank_account' && p.purpose !== 'deposit_return'),
    name: ({ day, sequence }) => {
      const modifier = MODIFIERS[sequence];
      if (!modifier) throw new Error(`${MODIFIERS.length} ACH files went out on ${day} already: NACHA allows no more in a day`);
      return { name: `ACH-${day}-${modifier}.ach`, fileIdModifier: modifier };
    },
    build: async (payments, { now, effectiveDate, fileIdModifier }) => {
      if (!fileIdModifier) throw new Error('an ACH file is built with the file id modifier of its name');
      const entries: AchEntry[] = payments.map((p) => ({
        idNumber: p.entry_ref,
        traceNumber: `${settings.originator.odfiRouting.slice(0, 8)}${p.entry_ref.slice(-7)}`,
        direction: p.direction,
        accountType: p.account_type === 'savings' ? 'savings' : 'checking',
        routingNumber: p.routing_number!,
        accountNumber: cipher.decryptText(p.number_encrypted!),
        amountMinor: BigInt(p.amount_minor),
        name: receiverName(p).toUpperCase().slice(0, 22),
        secCode: p.customer_type === 'business' ? 'CCD' : 'PPD',
        effectiveDate,
        entryDescription: DESCRIPTIONS[p.purpose] ?? 'PAYMENT',
      }));
      const built = await buildAchFile({ ...settings.originator, entryDescription: 'PAYMENT' }, entries, { createdAt: now, fileIdModifier });
      return { text: built.text, totals: built.totals };
    },
  };
}

/** Files the window's queued ACH payments in one NACHA file (fileWindow: recorded with them, once per window). */
export function fileAchWindow(
  db: Db, cipher: DataCipher, settings: AchWindowSettings, window: { id: string; kind: AchWindow }, now = new Date(),
): Promise<FiledWindow | null> {
  return fileWindow(db, cipher, settings, window, achFormat(settings, cipher, window.kind), now);
}
