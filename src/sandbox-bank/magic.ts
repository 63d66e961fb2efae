import type { ReadCredit } from '../providers/bank-files/sepa-messages';

// The values that make a bank counterpart answer by itself (docs/TRANSFERS.md, "The test bank's
// magic values"): the sandbox bank under `npm start` and the tests' test bank read them alike.

/** Cents of an entry's amount that make the bank answer (ACH: .14 returned R01, .15 corrected C01; SEPA: .13 rejected AC04, .14 returned AC04). */
export const BANK_MAGIC_CENTS = { returnR01: 14n, notificationC01: 15n, sepaRejectAC04: 13n, sepaReturnAC04: 14n } as const;

/** An account the bank knows as closed: a SEPA credit transfer to it is rejected (pain.002, AC04). */
export const CLOSED_IBAN = 'DE02120300000000202051';
/** A payee whose credit transfer makes the bank reject the whole message it came in (DU01), or its payment block (AM04). */
export const MESSAGE_REJECTED_IBAN = 'DE83370400440532013011';
export const BLOCK_REJECTED_IBAN = 'DE77370400440532013022';
/** The account number a magic notification of change (C01) gives. */
export const CORRECTED_ACCOUNT = '55500011122';

/** An ACH entry as the bank reads it: enough to pick its answer. */
export interface MagicAchEntry {
  amountMinor: bigint;
  description: string;
}

/** Which entries the bank returns (R01) and which it corrects (C01). Micro-deposits' random cents would hit the magic ones by chance: never answered. */
export function achMagicAnswers<E extends MagicAchEntry>(entries: E[]): { returns: E[]; changes: E[] } {
  const cents = (e: E) => (e.description === 'ACCTVERIFY' ? -1n : e.amountMinor % 100n);
  return {
    returns: entries.filter((e) => cents(e) === BANK_MAGIC_CENTS.returnR01),
    changes: entries.filter((e) => cents(e) === BANK_MAGIC_CENTS.notificationC01),
  };
}

/** What the bank does with a pain.001's credit transfers: the whole message or its block refused, some rejected (AC04), some returned once booked (AC04). */
export function sepaMagicAnswers<C extends Pick<ReadCredit, 'amountMinor' | 'creditorIban'>>(credits: C[]) {
  const cents = (c: C) => c.amountMinor % 100n;
  return {
    messageRejected: credits.some((c) => c.creditorIban === MESSAGE_REJECTED_IBAN),
    blockRejected: credits.some((c) => c.creditorIban === BLOCK_REJECTED_IBAN),
    rejected: credits.filter((c) => cents(c) === BANK_MAGIC_CENTS.sepaRejectAC04 || c.creditorIban === CLOSED_IBAN),
    returned: credits.filter((c) => cents(c) === BANK_MAGIC_CENTS.sepaReturnAC04),
  };
}
