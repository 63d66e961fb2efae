import { readBai2, type Bai2File } from './bai2';
import { readCamt053, type Camt053Statement } from './camt053';

// The end-of-day statements of our accounts a bank sends (BAI2 for a US account, camt.053 for a
// SEPA one), told apart from its other answers and read one account at a time.

/** One account's statement in a file: its closing balance (BAI2 015, camt.053 CLBD) and what it was read from. */
export type AccountStatement = { id: string; account: string; entries: number; closingMinor: bigint | null; problems: string[] } & (
  | { format: 'bai2'; file: Bai2File }
  | { format: 'camt.053'; statement: Camt053Statement }
);

/** How a kept statement file's detail begins (one per account it states), by which it is found again. */
export const STATEMENT_FILE_DETAIL = 'statement of ';

/** Whether a file from the bank is a statement rather than another answer. */
export const isStatementFile = (text: string) => /^\s*01,/.test(text) || text.includes('BkToCstmrStmt');

/** The account statements a BAI2 file or a camt.053 holds, one per account (per group, in BAI2). */
export function readStatementFile(text: string): AccountStatement[] {
  if (/^\s*01,/.test(text)) {
    const file = readBai2(text);
    return file.groups.flatMap((g, i) => g.accounts.map((a) => ({
      format: 'bai2' as const, file, id: `${file.fileId}:${i + 1}:${a.number}`, account: a.number, entries: a.transactions.length,
      closingMinor: a.summaries.find((x) => x.typeCode === '015')?.amountMinor ?? null, problems: file.problems,
    })));
  }
  return readCamt053(text).map((st) => ({
    format: 'camt.053' as const, statement: st, id: st.id, account: st.iban, entries: st.entries.length,
    closingMinor: st.balances.find((b) => b.type === 'CLBD')?.amountMinor ?? null, problems: st.problems,
  }));
}
