import { XMLParser } from 'fast-xml-parser';
import SEPA from 'sepa';
import { formatAmount, parseAmount } from '../../domain/money';

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

/** The most one credit transfer carries through the library (its own bound); the SEPA rail's is lower. */
const MAX_CREDIT_MINOR = 99_999_999_999n;

/** A Date whose local calendar fields are `at`'s UTC ones: the library formats dates with the local calendar. */
const localOf = (at: Date) => new Date(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate(), at.getUTCHours(), at.getUTCMinutes(), at.getUTCSeconds());

const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', removeNSPrefix: true, parseTagValue: false, isArray: (name) => ['PmtInf', 'CdtTrfTxInf', 'OrgnlPmtInfAndSts', 'TxInfAndSts', 'Ntfctn', 'Ntry', 'TxDtls', 'StsRsnInf'].includes(name) });

/**
 * A pain.001.001.09 message of `credits` from `debtor`, to be executed on `executionDate`
 * (YYYY-MM-DD). The message's own count and control sum are read back and compared with the bigint
 * sums before it is returned; a message that disagrees is refused.
 */
export function buildPain001(
  debtor: SepaDebtor, credits: SepaCredit[], opts: { messageId: string; createdAt: Date; executionDate: string },
): { text: string; totalMinor: bigint } {
  if (credits.length === 0) throw new Error('A pain.001 needs at least one credit transfer');
  const bad = credits.find((c) => c.amountMinor <= 0n || c.amountMinor > MAX_CREDIT_MINOR);
  if (bad) throw new Error(`Credit ${bad.endToEndId}: ${formatAmount(bad.amountMinor, 2)} is not a SEPA amount`);
  const doc = new SEPA.Document('pain.001.001.09');
  doc.grpHdr.id = opts.messageId;
  doc.grpHdr.created = localOf(opts.createdAt);
  doc.grpHdr.initiatorName = debtor.name;
  const info = doc.createPaymentInfo();
  info.requestedExecutionDate = localOf(new Date(`${opts.executionDate}T00:00:00Z`));
  info.debtorName = debtor.name;
  info.debtorIBAN = debtor.iban;
  info.debtorBIC = debtor.bic;
  doc.addPaymentInfo(info);
  for (const c of credits) {
    const tx = info.createTransaction();
    tx.creditorName = c.creditorName.slice(0, 70);
    tx.creditorIBAN = c.creditorIban;
    tx.creditorBIC = c.creditorBic;
    // Cents as a JavaScript number: exact for every amount up to 2^53 cents; the sums are checked below.
    tx.amount = Number(formatAmount(c.amountMinor, 2));
    tx.currency = 'EUR';
    tx.end2endId = c.endToEndId;
    tx.remittanceInfo = c.remittance.slice(0, 140);
    info.addTransaction(tx);
  }
  const text = doc.toString();
  const totalMinor = credits.reduce((sum, c) => sum + c.amountMinor, 0n);
  const read = readPain001(text);
  if (read.count !== credits.length || read.controlSumMinor !== totalMinor || read.credits.reduce((s, c) => s + c.amountMinor, 0n) !== totalMinor) {
    throw new Error(`The pain.001 says ${read.count} payments of ${formatAmount(read.controlSumMinor, 2)}, not ${credits.length} of ${formatAmount(totalMinor, 2)}: it is not used`);
  }
  return { text, totalMinor };
}

const minorOf = (text: unknown, where: string): bigint => {
  const minor = parseAmount(String(text ?? ''), 2);
  if (minor === null) throw new Error(`${where}: '${String(text)}' is not an amount`);
  return minor;
};

const textOf = (node: unknown): string => (node && typeof node === 'object' ? String((node as Record<string, unknown>)['#text'] ?? '') : String(node ?? ''));

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

/** What the bank's status report (pain.002) says of each payment: rejected ones with their reason. */
export interface SepaStatus {
  endToEndId: string;
  status: string;
  reason?: string;
}

export function readPain002(text: string): SepaStatus[] {
  const root = parser.parse(text)?.Document?.CstmrPmtStsRpt;
  if (!root) throw new Error('Not a pain.002 payment status report');
  return (root.OrgnlPmtInfAndSts ?? []).flatMap((p: any) => (p.TxInfAndSts ?? []).map((tx: any) => ({
    endToEndId: String(tx.OrgnlEndToEndId ?? ''),
    status: String(tx.TxSts ?? ''),
    ...(tx.StsRsnInf?.[0]?.Rsn?.Cd ? { reason: String(tx.StsRsnInf[0].Rsn.Cd) } : {}),
  })));
}

/** What a camt.054 notification says: money credited to our account, and our payments sent back. */
export type SepaNotification =
  | { kind: 'credit'; id: string; amountMinor: bigint; reference: string; senderName: string }
  | { kind: 'return'; id: string; endToEndId: string; code: string };

export function readCamt054(text: string): SepaNotification[] {
  const root = parser.parse(text)?.Document?.BkToCstmrDbtCdtNtfctn;
  if (!root) throw new Error('Not a camt.054 debit/credit notification');
  const out: SepaNotification[] = [];
  for (const n of root.Ntfctn ?? []) {
    for (const entry of n.Ntry ?? []) {
      for (const tx of entry.NtryDtls?.TxDtls ?? []) {
        const id = String(tx.Refs?.AcctSvcrRef ?? entry.AcctSvcrRef ?? '');
        const returned = tx.RtrInf?.Rsn?.Cd;
        if (returned) out.push({ kind: 'return', id, endToEndId: String(tx.Refs?.EndToEndId ?? ''), code: String(returned) });
        else if (String(entry.CdtDbtInd) === 'CRDT') {
          out.push({
            kind: 'credit', id, amountMinor: minorOf(textOf(tx.Amt ?? entry.Amt), 'Amt'),
            reference: String(tx.RmtInf?.Ustrd ?? '').trim().split(/\s+/)[0] ?? '', senderName: String(tx.RltdPties?.Dbtr?.Pty?.Nm ?? tx.RltdPties?.Dbtr?.Nm ?? ''),
          });
        }
      }
    }
  }
  return out;
}
