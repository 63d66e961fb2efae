import { XMLBuilder } from 'fast-xml-parser';
import { formatAmount } from '../domain/money';

// The end-of-day statements a bank sends for the platform's accounts, as the sandbox bank writes
// them from what it booked: BAI2 for the US account, ISO 20022 camt.053.001.08 for the SEPA one.
// The tests read them with moov-io/bai2 and the ISO schema, and with the platform's own readers.

/** One movement the bank booked on an account: what a statement line says. */
export interface BookedLine {
  direction: 'credit' | 'debit';
  amountMinor: bigint;
  /** The bank's own reference for the line. */
  bankReference: string;
  /** Ours: the file and batch, the end-to-end id, the trace. */
  customerReference: string;
  /** BAI2 type code (credits 100–399, debits 400–699), e.g. 469 an ACH batch paid out. */
  bai2TypeCode: string;
  /** ISO bank transaction code, `PMNT/ICDT/ESCT`. */
  bankTransactionCode: string;
  text: string;
  /** A batch booking of a message of ours: its ids and each transaction's end-to-end id and amount. */
  batch?: { messageId: string; paymentInfoId: string; transactions: { endToEndId: string; amountMinor: bigint }[] };
  /** A return's reason code and the end-to-end id it returns. */
  returned?: { code: string; endToEndId: string };
}

export interface StatementInput {
  /** The statement's number (the account's n-th) and when it is made. */
  sequence: number;
  at: Date;
  account: string;
  currency: string;
  openingMinor: bigint;
  lines: BookedLine[];
}

export const closingOf = (s: Pick<StatementInput, 'openingMinor' | 'lines'>) =>
  s.lines.reduce((sum, l) => (l.direction === 'credit' ? sum + l.amountMinor : sum - l.amountMinor), s.openingMinor);

const yymmdd = (d: Date) => d.toISOString().slice(2, 10).replaceAll('-', '');
const hhmm = (d: Date) => d.toISOString().slice(11, 16).replace(':', '');
/** BAI2 text: no record ends early on a `/`, and commas stay in the text (its last field). */
const bai2Text = (s: string) => s.replaceAll('/', ' ').trim();

/** A BAI2 file: one group, one account (opening and closing ledger, total credits and debits), each line a `16`. */
export function bai2Statement(input: StatementInput & { bankId: string; customerId: string }): string {
  const credits = input.lines.filter((l) => l.direction === 'credit');
  const debits = input.lines.filter((l) => l.direction === 'debit');
  const sum = (ls: BookedLine[]) => ls.reduce((s, l) => s + l.amountMinor, 0n);
  const closing = closingOf(input);
  const summaries: [string, bigint, number | ''][] = [['010', input.openingMinor, ''], ['015', closing, ''], ['100', sum(credits), credits.length], ['400', sum(debits), debits.length]];
  const account = [
    `03,${input.account},${input.currency.toUpperCase()},${summaries.map(([code, amount, n]) => `${code},${amount},${n},`).join(',')}/`,
    ...input.lines.map((l) => `16,${l.bai2TypeCode},${l.amountMinor},Z,${l.bankReference},${l.customerReference},${bai2Text(l.text)}`),
  ];
  const accountTotal = summaries.reduce((s, [, amount]) => s + amount, 0n) + sum(input.lines);
  const asOf = input.at;
  const group = [`02,${input.customerId},${input.bankId},1,${yymmdd(asOf)},${hhmm(asOf)},${input.currency.toUpperCase()},2/`, ...account, `49,${accountTotal},${account.length + 1}/`];
  return [
    `01,${input.bankId},${input.customerId},${yymmdd(asOf)},${hhmm(asOf)},${input.sequence},,,2/`,
    ...group,
    `98,${accountTotal},1,${group.length + 1}/`,
    `99,${accountTotal},1,${group.length + 3}/`,
    '',
  ].join('\n');
}

const builder = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@', format: true });

/** A camt.053.001.08 statement of the SEPA account: opening and closing booked balances, each line an entry. */
export function camt053Statement(input: StatementInput & { bic: string }): string {
  const id = `STMT-${input.at.toISOString().slice(0, 10).replaceAll('-', '')}-${input.sequence}`;
  const day = input.at.toISOString().slice(0, 10);
  const amount = (minor: bigint) => ({ '#text': formatAmount(minor < 0n ? -minor : minor, 2), '@Ccy': input.currency.toUpperCase() });
  const balance = (code: string, minor: bigint) => ({
    Tp: { CdOrPrtry: { Cd: code } }, Amt: amount(minor), CdtDbtInd: minor < 0n ? 'DBIT' : 'CRDT', Dt: { Dt: day },
  });
  return `<?xml version="1.0" encoding="UTF-8"?>\n${builder.build({
    Document: {
      '@xmlns': 'urn:iso:std:iso:20022:tech:xsd:camt.053.001.08',
      BkToCstmrStmt: {
        GrpHdr: { MsgId: id, CreDtTm: `${input.at.toISOString().slice(0, 19)}Z` },
        Stmt: {
          Id: id, ElctrncSeqNb: String(input.sequence), CreDtTm: `${input.at.toISOString().slice(0, 19)}Z`,
          Acct: { Id: { IBAN: input.account }, Ccy: input.currency.toUpperCase(), Svcr: { FinInstnId: { BICFI: input.bic } } },
          Bal: [balance('OPBD', input.openingMinor), balance('CLBD', closingOf(input))],
          TxsSummry: { TtlNtries: { NbOfNtries: String(input.lines.length) } },
          Ntry: input.lines.map((l) => camtEntry(l, day, amount)),
        },
      },
    },
  })}`;
}

function camtEntry(l: BookedLine, day: string, amount: (minor: bigint) => unknown) {
  const [Cd, Fmly, SubFmlyCd] = l.bankTransactionCode.split('/');
  const details = l.batch
    ? {
      Btch: { MsgId: l.batch.messageId, PmtInfId: l.batch.paymentInfoId, NbOfTxs: String(l.batch.transactions.length) },
      TxDtls: l.batch.transactions.map((t) => ({ Refs: { EndToEndId: t.endToEndId }, Amt: amount(t.amountMinor) })),
    }
    : {
      TxDtls: {
        Refs: { AcctSvcrRef: l.bankReference, EndToEndId: l.returned?.endToEndId ?? l.customerReference }, Amt: amount(l.amountMinor),
        ...(l.returned ? { RtrInf: { Rsn: { Cd: l.returned.code } } } : { RmtInf: { Ustrd: l.text } }),
      },
    };
  return {
    NtryRef: l.customerReference, Amt: amount(l.amountMinor), CdtDbtInd: l.direction === 'credit' ? 'CRDT' : 'DBIT', Sts: { Cd: 'BOOK' },
    BookgDt: { Dt: day }, ValDt: { Dt: day }, AcctSvcrRef: l.bankReference,
    BkTxCd: { Domn: { Cd, Fmly: { Cd: Fmly, SubFmlyCd } } },
    NtryDtls: details,
    AddtlNtryInf: l.text,
  };
}
