import SEPA from 'sepa';
import { formatAmount } from '../../domain/money';
import { iso20022Parser, minorOf, textOf } from './iso20022-values';
import { sepaText } from './rail-text';

// SEPA credit transfers as the bank takes them (docs/BANK_FILES.md): pain.001.001.09 written by the
// `sepa` library, checked in bigint before anybody records or uploads it; the bank's pain.002 status
// reports and camt.054 notifications read with fast-xml-parser.

/** Who pays: the platform's account at its bank. */
export interface SepaDebtor {
  name: string;
  iban: string;
  bic: string;
}

export interface SepaCredit {
  /** Our reference for the payment (up to 35 characters): how the bank's answers name it. */
  endToEndId: string;
  amountMinor: bigint;
  creditorName: string;
  creditorIban: string;
  creditorBic: string;
  /** What the receiver's statement shows. */
  remittance: string;
}

/** The most one SEPA credit transfer carries: 999,999,999.99 (the EPC rulebook's bound, and the library's). */
export const MAX_SEPA_CREDIT_MINOR = 99_999_999_999n;

/** A Date whose local calendar fields are `at`'s UTC ones: the library formats dates with the local calendar. */
const localOf = (at: Date) => new Date(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate(), at.getUTCHours(), at.getUTCMinutes(), at.getUTCSeconds());

const parser = iso20022Parser(['PmtInf', 'CdtTrfTxInf', 'OrgnlPmtInfAndSts', 'TxInfAndSts', 'Ntfctn', 'Ntry', 'NtryDtls', 'TxDtls', 'StsRsnInf']);

type PaymentInfo = ReturnType<InstanceType<typeof SEPA.Document>['createPaymentInfo']>;

function creditTransaction(info: PaymentInfo, c: SepaCredit) {
  const tx = info.createTransaction();
  tx.creditorName = sepaText(c.creditorName, 70) || 'ACCOUNT HOLDER';
  tx.creditorIBAN = c.creditorIban;
  tx.creditorBIC = c.creditorBic;
  // Cents as a JavaScript number: exact for every amount up to 2^53 cents; the sums are checked after.
  tx.amount = Number(formatAmount(c.amountMinor, 2));
  tx.currency = 'EUR';
  tx.end2endId = c.endToEndId;
  tx.remittanceInfo = sepaText(c.remittance, 140);
  return tx;
}

/**
 * What the `sepa` library refuses in a credit transfer (its IBAN, its BIC's country against the
 * IBAN's, lengths, the amount), in its words; undefined when it would write it. One credit it
 * refuses would otherwise fail the whole message.
 */
export function sepaCreditProblem(c: SepaCredit): string | undefined {
  const info = new SEPA.Document('pain.001.001.09').createPaymentInfo();
  try {
    creditTransaction(info, c).validate();
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/**
 * A pain.001.001.09 message of `credits` from `debtor`, to be executed on `executionDate`
 * (YYYY-MM-DD). The message's own count and control sum are read back and compared with the bigint
 * sums before it is returned; a message that disagrees is refused.
 */
export function buildPain001(
  debtor: SepaDebtor, credits: SepaCredit[], opts: { messageId: string; createdAt: Date; executionDate: string },
): { text: string; totalMinor: bigint } {
  if (credits.length === 0) throw new Error('A pain.001 needs at least one credit transfer');
  const bad = credits.find((c) => c.amountMinor <= 0n || c.amountMinor > MAX_SEPA_CREDIT_MINOR);
  if (bad) throw new Error(`Credit ${bad.endToEndId}: ${formatAmount(bad.amountMinor, 2)} is not a SEPA amount`);
  const doc = new SEPA.Document('pain.001.001.09');
  doc.grpHdr.id = opts.messageId;
  doc.grpHdr.created = localOf(opts.createdAt);
  doc.grpHdr.initiatorName = sepaText(debtor.name, 70);
  const info = doc.createPaymentInfo();
  info.requestedExecutionDate = localOf(new Date(`${opts.executionDate}T00:00:00Z`));
  info.debtorName = sepaText(debtor.name, 70);
  info.debtorIBAN = debtor.iban;
  info.debtorBIC = debtor.bic;
  doc.addPaymentInfo(info);
  for (const c of credits) info.addTransaction(creditTransaction(info, c));
  // The creation time in UTC with its offset (the library writes local time without one).
  const text = doc.toString().replace(/<CreDtTm>[^<]*<\/CreDtTm>/, `<CreDtTm>${opts.createdAt.toISOString().slice(0, 19)}Z</CreDtTm>`);
  const totalMinor = credits.reduce((sum, c) => sum + c.amountMinor, 0n);
  const read = readPain001(text);
  if (read.count !== credits.length || read.controlSumMinor !== totalMinor || read.credits.reduce((s, c) => s + c.amountMinor, 0n) !== totalMinor) {
    throw new Error(`The pain.001 says ${read.count} payments of ${formatAmount(read.controlSumMinor, 2)}, not ${credits.length} of ${formatAmount(totalMinor, 2)}: it is not used`);
  }
  return { text, totalMinor };
}


export interface ReadCredit {
  endToEndId: string;
  amountMinor: bigint;
  currency: string;
  creditorName: string;
  creditorIban: string;
  creditorBic: string;
  remittance: string;
  executionDate: string;
  debtorIban: string;
}

/** A pain.001's group header and credit transfers, as the bank reads them. */
export function readPain001(text: string): { messageId: string; count: number; controlSumMinor: bigint; credits: ReadCredit[] } {
  const root = parser.parse(text)?.Document?.CstmrCdtTrfInitn;
  if (!root) throw new Error('Not a pain.001 credit transfer initiation');
  const credits: ReadCredit[] = (root.PmtInf ?? []).flatMap((p: any) => (p.CdtTrfTxInf ?? []).map((tx: any) => ({
    endToEndId: String(tx.PmtId?.EndToEndId ?? ''),
    amountMinor: minorOf(textOf(tx.Amt?.InstdAmt), 'InstdAmt'),
    currency: String(tx.Amt?.InstdAmt?.['@Ccy'] ?? ''),
    creditorName: String(tx.Cdtr?.Nm ?? ''),
    creditorIban: String(tx.CdtrAcct?.Id?.IBAN ?? ''),
    creditorBic: String(tx.CdtrAgt?.FinInstnId?.BICFI ?? ''),
    remittance: String(tx.RmtInf?.Ustrd ?? ''),
    executionDate: String(p.ReqdExctnDt?.Dt ?? ''),
    debtorIban: String(p.DbtrAcct?.Id?.IBAN ?? ''),
  })));
  return {
    messageId: String(root.GrpHdr?.MsgId ?? ''),
    count: Number(root.GrpHdr?.NbOfTxs),
    controlSumMinor: minorOf(root.GrpHdr?.CtrlSum, 'CtrlSum'),
    credits,
  };
}

/** What the bank's status report (pain.002) says of one of our payments. */
export interface SepaStatus {
  endToEndId: string;
  status: string;
  reason?: string;
}

/**
 * A pain.002 status report at each of its three levels: the whole message (group), each payment
 * block, each transaction. A status is ISO 20022's: RJCT rejected, PART partly accepted (read the
 * levels below), ACCP/ACTC/ACSC/ACWC accepted, PDNG pending.
 */
export interface Pain002Report {
  /** The message it answers (our pain.001's MsgId). */
  messageId: string;
  group: { status?: string; reason?: string };
  blocks: { paymentInfoId: string; status?: string; reason?: string; transactions: SepaStatus[] }[];
}

const reasonOf = (node: any): string | undefined => {
  const code = node?.StsRsnInf?.[0]?.Rsn?.Cd ?? node?.StsRsnInf?.[0]?.Rsn?.Prtry;
  return code ? String(code) : undefined;
};

export function readPain002(text: string): Pain002Report {
  const root = parser.parse(text)?.Document?.CstmrPmtStsRpt;
  if (!root) throw new Error('Not a pain.002 payment status report');
  const group = root.OrgnlGrpInfAndSts ?? {};
  return {
    messageId: String(group.OrgnlMsgId ?? ''),
    group: { ...(group.GrpSts ? { status: String(group.GrpSts) } : {}), ...(reasonOf(group) ? { reason: reasonOf(group) } : {}) },
    blocks: (root.OrgnlPmtInfAndSts ?? []).map((p: any) => ({
      paymentInfoId: String(p.OrgnlPmtInfId ?? ''),
      ...(p.PmtInfSts ? { status: String(p.PmtInfSts) } : {}),
      ...(reasonOf(p) ? { reason: reasonOf(p) } : {}),
      transactions: (p.TxInfAndSts ?? []).map((tx: any) => ({
        endToEndId: String(tx.OrgnlEndToEndId ?? ''),
        status: String(tx.TxSts ?? ''),
        ...(reasonOf(tx) ? { reason: reasonOf(tx) } : {}),
      })),
    })),
  };
}

/** What a camt.054 notification says: money credited to our account, and our payments sent back. */
export type SepaNotification =
  | { kind: 'credit'; id: string; amountMinor: bigint; reference: string; senderName: string }
  | { kind: 'return'; id: string; endToEndId: string; code: string };

/** A deposit reference as the platform gives them (`FP` and 12 letters or digits). */
const DEPOSIT_REFERENCE = /\bFP[0-9A-Z]{12}\b/;

/**
 * A credit's deposit reference from its unstructured remittance lines (one `Ustrd` or several): the
 * platform's reference wherever a line holds it, else the first word of the first line.
 */
function referenceOf(ustrd: unknown): string {
  const lines = (Array.isArray(ustrd) ? ustrd : [ustrd]).map((l) => textOf(l).trim()).filter(Boolean);
  for (const line of lines) {
    const found = DEPOSIT_REFERENCE.exec(line.toUpperCase());
    if (found) return found[0];
  }
  return lines[0]?.split(/\s+/)[0] ?? '';
}

/**
 * A camt.054's transactions, one item each: an entry booked as a batch (one `Ntry`, several
 * `TxDtls`) gives each transaction its own id (its account servicer reference, else the entry's
 * with its place), amount and reference.
 */
export function readCamt054(text: string): SepaNotification[] {
  const root = parser.parse(text)?.Document?.BkToCstmrDbtCdtNtfctn;
  if (!root) throw new Error('Not a camt.054 debit/credit notification');
  const out: SepaNotification[] = [];
  for (const n of root.Ntfctn ?? []) {
    for (const entry of n.Ntry ?? []) {
      const txs: any[] = (entry.NtryDtls ?? []).flatMap((d: any) => d?.TxDtls ?? []);
      const entryRef = String(entry.AcctSvcrRef ?? entry.NtryRef ?? '');
      const refs = txs.map((tx) => (tx.Refs?.AcctSvcrRef ? String(tx.Refs.AcctSvcrRef) : ''));
      txs.forEach((tx, i) => {
        // Its own reference when no other transaction of the entry shares it; else the entry's and its place.
        const own = refs[i]!;
        const id = own && refs.filter((r) => r === own).length === 1 ? own : `${own || entryRef}:${i + 1}`;
        const returned = tx.RtrInf?.Rsn?.Cd;
        if (returned) out.push({ kind: 'return', id, endToEndId: String(tx.Refs?.EndToEndId ?? ''), code: String(returned) });
        else if (String(entry.CdtDbtInd) === 'CRDT') {
          // A transaction's own amount; the entry's only where the entry holds it alone.
          const amount = tx.Amt ?? tx.AmtDtls?.TxAmt?.Amt ?? (txs.length === 1 ? entry.Amt : undefined);
          if (amount === undefined) throw new Error(`camt.054 entry ${entryRef}: transaction ${i + 1} of ${txs.length} has no amount of its own`);
          out.push({
            kind: 'credit', id, amountMinor: minorOf(textOf(amount), 'Amt'),
            reference: referenceOf(tx.RmtInf?.Ustrd), senderName: String(tx.RltdPties?.Dbtr?.Pty?.Nm ?? tx.RltdPties?.Dbtr?.Nm ?? ''),
          });
        }
      });
    }
  }
  return out;
}
