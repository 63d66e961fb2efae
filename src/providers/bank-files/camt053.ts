import { iso20022Parser, minorOf, textOf } from './iso20022-values';

// ISO 20022 camt.053, the bank-to-customer statement: the SEPA account's end-of-day statement
// (docs/BANK_FILES.md). Read by element name, whatever the message's version (.02 to .08 alike):
// balances, and each entry with its status, dates, bank transaction code, batch (the message and
// payment block of ours it books, when it books a file as one line) and its transactions' details.

const parser = iso20022Parser(['Stmt', 'Bal', 'Ntry', 'NtryDtls', 'TxDtls', 'Ustrd']);

/** A balance, signed: a debit balance is negative. OPBD opening booked, CLBD closing booked, PRCD the previous closing. */
export interface StatementBalance {
  type: string;
  amountMinor: bigint;
  date: string;
}

/** A transaction an entry books, as far as the bank details it. */
export interface StatementTransaction {
  /** The bank's reference, else the end-to-end id. */
  reference: string;
  endToEndId: string;
  /** Its own amount in the account's currency, when the bank gives one. */
  amountMinor: bigint | null;
  /** The other party: the debtor of a credit, the creditor of a debit. */
  counterparty: string;
  remittance: string;
  /** A return's reason code. */
  returnCode: string;
  /** Charges the banks took on the way (a wire that arrives less a correspondent's fee). */
  chargesMinor: bigint;
}

export interface StatementEntry {
  reference: string;
  amountMinor: bigint;
  direction: 'credit' | 'debit';
  /** BOOK booked, PDNG pending, INFO for information. */
  status: string;
  reversal: boolean;
  bookingDate: string;
  valueDate: string;
  /** Domain/family/sub-family (`PMNT/ICDT/ESCT`), else the proprietary code. */
  bankTransactionCode: string;
  /** A batch booking: our message and payment block it books as one line, and how many transactions. */
  batch: { messageId: string; paymentInfoId: string; count: number | null } | null;
  transactions: StatementTransaction[];
  info: string;
}

export interface Camt053Statement {
  id: string;
  iban: string;
  currency: string;
  balances: StatementBalance[];
  entries: StatementEntry[];
  /** Where the balances and the booked entries disagree (opening + entries ≠ closing). */
  problems: string[];
}

const str = (v: unknown) => textOf(v).trim();
const dateOf = (node: any) => str(node?.Dt ?? node?.DtTm ?? '');

function balanceOf(b: any): StatementBalance {
  const amount = minorOf(textOf(b.Amt), 'Bal/Amt');
  return { type: str(b.Tp?.CdOrPrtry?.Cd ?? b.Tp?.CdOrPrtry?.Prtry), amountMinor: str(b.CdtDbtInd) === 'DBIT' ? -amount : amount, date: dateOf(b.Dt) };
}

function bankTransactionCode(code: any): string {
  const domain = code?.Domn;
  if (domain) return [domain.Cd, domain.Fmly?.Cd, domain.Fmly?.SubFmlyCd].map(str).filter(Boolean).join('/');
  return str(code?.Prtry?.Cd);
}

/** A transaction's amount in the account's currency: its own, its transaction amount, or the entry's when it is the entry's only one. */
function transactionAmount(tx: any, entryAmount: bigint, alone: boolean): bigint | null {
  const own = tx.Amt ?? tx.AmtDtls?.TxAmt?.Amt;
  if (own !== undefined) return minorOf(textOf(own), 'TxDtls/Amt');
  return alone ? entryAmount : null;
}

/** Charges in either shape: `Chrgs/Amt` (version .02) or `Chrgs/Rcrd/Amt` (later versions). */
function chargesOf(chrgs: any): bigint {
  if (!chrgs) return 0n;
  const records: any[] = Array.isArray(chrgs.Rcrd) ? chrgs.Rcrd : chrgs.Rcrd ? [chrgs.Rcrd] : [chrgs];
  return records.reduce((sum, r) => sum + (r?.Amt === undefined ? 0n : minorOf(textOf(r.Amt), 'Chrgs/Amt')), 0n);
}

function transactionOf(tx: any, entry: { amountMinor: bigint; direction: string }, alone: boolean): StatementTransaction {
  const parties = tx.RltdPties ?? {};
  const other = entry.direction === 'credit' ? parties.Dbtr : parties.Cdtr;
  const endToEndId = str(tx.Refs?.EndToEndId);
  return {
    reference: str(tx.Refs?.AcctSvcrRef) || endToEndId || str(tx.Refs?.TxId) || str(tx.Refs?.InstrId),
    endToEndId: endToEndId === 'NOTPROVIDED' ? '' : endToEndId,
    amountMinor: transactionAmount(tx, entry.amountMinor, alone),
    counterparty: str(other?.Pty?.Nm ?? other?.Nm),
    remittance: (tx.RmtInf?.Ustrd ?? []).map(str).filter(Boolean).join(' '),
    returnCode: str(tx.RtrInf?.Rsn?.Cd),
    chargesMinor: chargesOf(tx.Chrgs),
  };
}

function entryOf(n: any, index: number): StatementEntry {
  const amountMinor = minorOf(textOf(n.Amt), 'Ntry/Amt');
  const direction = str(n.CdtDbtInd) === 'DBIT' ? 'debit' : 'credit';
  const details: any[] = n.NtryDtls ?? [];
  const btch = details.map((d) => d?.Btch).find(Boolean);
  const txs: any[] = details.flatMap((d) => d?.TxDtls ?? []);
  // Details with nothing to tell a transaction by (only a purpose code) are not transactions.
  const described = txs.filter((tx) => tx.Refs || tx.Amt || tx.AmtDtls || tx.RltdPties || tx.RmtInf);
  return {
    reference: str(n.AcctSvcrRef) || str(n.NtryRef) || `entry ${index + 1}`,
    amountMinor, direction, status: str(n.Sts?.Cd ?? n.Sts), reversal: str(n.RvslInd) === 'true',
    bookingDate: dateOf(n.BookgDt), valueDate: dateOf(n.ValDt), bankTransactionCode: bankTransactionCode(n.BkTxCd),
    batch: btch ? { messageId: str(btch.MsgId), paymentInfoId: str(btch.PmtInfId), count: btch.NbOfTxs === undefined ? null : Number(str(btch.NbOfTxs)) } : null,
    transactions: described.map((tx) => transactionOf(tx, { amountMinor, direction }, described.length === 1)),
    info: str(n.AddtlNtryInf),
  };
}

/**
 * Opening (OPBD, else PRCD) plus the booked entries must give the closing balance (CLBD). Banks
 * differ on an entry booked today with a later value date: some count it in the closing balance,
 * some only in the forward one (the PostFinance and Finnish samples do one each). Either reading
 * that gives the closing balance is a match.
 */
function balanceProblems(balances: StatementBalance[], entries: StatementEntry[]): string[] {
  const opening = balances.find((b) => b.type === 'OPBD') ?? balances.find((b) => b.type === 'PRCD');
  const closing = balances.find((b) => b.type === 'CLBD');
  if (!opening || !closing) return [`the statement has no ${opening ? 'closing (CLBD)' : 'opening (OPBD or PRCD)'} balance`];
  const net = (list: StatementEntry[]) => list.reduce((sum, e) => sum + (e.direction === 'credit' ? e.amountMinor : -e.amountMinor), 0n);
  const booked = entries.filter((e) => e.status === 'BOOK');
  const valued = booked.filter((e) => !(e.valueDate && closing.date && e.valueDate > closing.date));
  if ([net(booked), net(valued)].some((n) => opening.amountMinor + n === closing.amountMinor)) return [];
  return [`opening ${opening.amountMinor} plus booked entries ${net(booked)} is ${opening.amountMinor + net(booked)}, not the closing balance ${closing.amountMinor}`];
}

/** The statements of a camt.053 message; throws when it is not one, or an amount is not one. */
export function readCamt053(text: string): Camt053Statement[] {
  const root = parser.parse(text)?.Document?.BkToCstmrStmt;
  if (!root) throw new Error('Not a camt.053 bank-to-customer statement');
  return (root.Stmt ?? []).map((s: any): Camt053Statement => {
    const balances = (s.Bal ?? []).map(balanceOf);
    const entries = (s.Ntry ?? []).map(entryOf);
    return {
      id: str(s.Id), iban: str(s.Acct?.Id?.IBAN), currency: str(s.Acct?.Ccy) || str(s.Bal?.[0]?.Amt?.['@Ccy']),
      balances, entries, problems: balanceProblems(balances, entries),
    };
  });
}
