import { XMLBuilder } from 'fast-xml-parser';
import { formatAmount } from '../domain/money';
import type { ReadCredit } from '../providers/bank-files/sepa-messages';
import { sepaMagicAnswers } from './magic';

// The SEPA messages a bank sends back (the sandbox bank, and the tests' test bank), written with
// fast-xml-parser's builder: status reports (pain.002) at each level, and debit/credit notifications
// (camt.054.001.08) of credits for the platform and of its payments returned.

const builder = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@', format: true });
const now = () => new Date().toISOString().slice(0, 19);
const amount = (minor: bigint) => ({ '#text': formatAmount(minor, 2), '@Ccy': 'EUR' });

function document(namespace: string, body: Record<string, unknown>): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n${builder.build({ Document: { '@xmlns': `urn:iso:std:iso:20022:tech:xsd:${namespace}`, ...body } })}`;
}

/** A status report rejecting each of `items` with its reason code. */
export function pain002Rejections(messageId: string, items: { credit: ReadCredit; code: string }[]): string {
  return document('pain.002.001.11', {
    CstmrPmtStsRpt: {
      GrpHdr: { MsgId: `STS${messageId}`.slice(0, 35), CreDtTm: now() },
      OrgnlGrpInfAndSts: { OrgnlMsgId: messageId, OrgnlMsgNmId: 'pain.001.001.09', GrpSts: 'PART' },
      OrgnlPmtInfAndSts: {
        OrgnlPmtInfId: `${messageId}.0`,
        TxInfAndSts: items.map(({ credit, code }) => ({
          OrgnlEndToEndId: credit.endToEndId, TxSts: 'RJCT', StsRsnInf: { Rsn: { Cd: code } },
          OrgnlTxRef: { Amt: { InstdAmt: amount(credit.amountMinor) }, CdtrAcct: { Id: { IBAN: credit.creditorIban } } },
        })),
      },
    },
  });
}

type Notified =
  | { kind: 'credit'; ref: string; amountMinor: bigint; reference: string; senderName: string }
  | { kind: 'return'; ref: string; credit: ReadCredit; code: string };

/** A notification of entries on the platform's account (`iban`): credits, and returns of its payments. */
export function camt054(iban: string, messageId: string, entries: Notified[]): string {
  const day = now().slice(0, 10);
  return document('camt.054.001.08', {
    BkToCstmrDbtCdtNtfctn: {
      GrpHdr: { MsgId: messageId, CreDtTm: now() },
      Ntfctn: {
        Id: messageId, CreDtTm: now(), Acct: { Id: { IBAN: iban } },
        Ntry: entries.map((e) => {
          const minor = e.kind === 'credit' ? e.amountMinor : e.credit.amountMinor;
          return {
            Amt: amount(minor), CdtDbtInd: 'CRDT', Sts: { Cd: 'BOOK' }, BookgDt: { Dt: day }, ValDt: { Dt: day }, AcctSvcrRef: e.ref,
            BkTxCd: { Domn: { Cd: 'PMNT', Fmly: { Cd: 'RCDT', SubFmlyCd: e.kind === 'credit' ? 'ESCT' : 'RRTN' } } },
            NtryDtls: {
              TxDtls: e.kind === 'credit'
                ? { Refs: { AcctSvcrRef: e.ref, EndToEndId: 'NOTPROVIDED' }, Amt: amount(minor), CdtDbtInd: 'CRDT', RltdPties: { Dbtr: { Pty: { Nm: e.senderName } } }, RmtInf: { Ustrd: e.reference } }
                : { Refs: { AcctSvcrRef: e.ref, EndToEndId: e.credit.endToEndId }, Amt: amount(minor), CdtDbtInd: 'CRDT', RtrInf: { Rsn: { Cd: e.code } } },
            },
          };
        }),
      },
    },
  });
}

/** A status report at any of its levels, as a SEPA bank writes it (pain.002.001.10, the EPC's 2025 version, unless told). */
export function pain002Report(messageId: string, report: {
  group?: { status: string; reason?: string };
  blocks: { id: string; status?: string; reason?: string; transactions: { credit: ReadCredit; status: string; code?: string }[] }[];
}, version = 'pain.002.001.10'): string {
  const reason = (code?: string) => (code ? { StsRsnInf: { Orgtr: { Nm: 'SANDBOX PLATFORM BANK EUROPE' }, Rsn: { Cd: code } } } : {});
  return document(version, {
    CstmrPmtStsRpt: {
      GrpHdr: { MsgId: `STS${messageId}`.slice(0, 35), CreDtTm: `${now()}Z`, DbtrAgt: { FinInstnId: { BICFI: 'COBADEFFXXX' } } },
      OrgnlGrpInfAndSts: { OrgnlMsgId: messageId, OrgnlMsgNmId: 'pain.001.001.09', ...(report.group ? { GrpSts: report.group.status, ...reason(report.group.reason) } : {}) },
      OrgnlPmtInfAndSts: report.blocks.map((b) => ({
        OrgnlPmtInfId: b.id, ...(b.status ? { PmtInfSts: b.status, ...reason(b.reason) } : {}),
        TxInfAndSts: b.transactions.map(({ credit, status, code }) => ({
          OrgnlEndToEndId: credit.endToEndId, TxSts: status, ...reason(code),
        })),
      })),
    },
  });
}

/** A camt.054 whose one entry books several credits as a batch (one `Ntry`, one `TxDtls` each), remittance lines as given. */
export function camt054Batch(iban: string, messageId: string, entryRef: string, credits: { ref?: string; amountMinor: bigint; lines: string[]; senderName: string }[]): string {
  const day = now().slice(0, 10);
  const total = credits.reduce((s, c) => s + c.amountMinor, 0n);
  return document('camt.054.001.08', {
    BkToCstmrDbtCdtNtfctn: {
      GrpHdr: { MsgId: messageId, CreDtTm: now() },
      Ntfctn: {
        Id: messageId, CreDtTm: now(), Acct: { Id: { IBAN: iban } },
        Ntry: {
          Amt: amount(total), CdtDbtInd: 'CRDT', Sts: { Cd: 'BOOK' }, BookgDt: { Dt: day }, ValDt: { Dt: day }, AcctSvcrRef: entryRef,
          BkTxCd: { Domn: { Cd: 'PMNT', Fmly: { Cd: 'RCDT', SubFmlyCd: 'ESCT' } } },
          NtryDtls: {
            Btch: { NbOfTxs: String(credits.length) },
            TxDtls: credits.map((c) => ({
              Refs: { ...(c.ref ? { AcctSvcrRef: c.ref } : {}), EndToEndId: 'NOTPROVIDED' }, Amt: amount(c.amountMinor), CdtDbtInd: 'CRDT',
              RltdPties: { Dbtr: { Pty: { Nm: c.senderName } } }, RmtInf: { Ustrd: c.lines },
            })),
          },
        },
      },
    },
  });
}

/**
 * What a bank sends back for a pain.001 it took, by the magic values (src/sandbox-bank/magic.ts):
 * status reports (the whole message or its block refused; transactions rejected; with `acknowledge`,
 * an acceptance ACCP of a message nothing refused) and a notification of the credits returned once
 * booked. `name(kind)` names each answer file.
 */
export function answersToPain001(
  message: { messageId: string; credits: ReadCredit[] }, iban: string, opts: { acknowledge: boolean; name: (kind: 'STS' | 'NTF') => string },
): { name: string; xml: string }[] {
  const magic = sepaMagicAnswers(message.credits);
  const answers: { name: string; xml: string }[] = [];
  const status = (xml: string) => answers.push({ name: opts.name('STS'), xml });
  if (magic.rejected.length > 0) status(pain002Rejections(message.messageId, magic.rejected.map((credit) => ({ credit, code: 'AC04' }))));
  // A whole message (group level) or its payment block refused, as a SEPA bank does: every payment in it.
  if (magic.messageRejected) status(pain002Report(message.messageId, { group: { status: 'RJCT', reason: 'DU01' }, blocks: [] }));
  else if (magic.blockRejected) status(pain002Report(message.messageId, { blocks: [{ id: `${message.messageId}.0`, status: 'RJCT', reason: 'AM04', transactions: [] }] }));
  // An acceptance is outside the EPC's reject-only pain.002: banks send it in plain ISO 20022.
  else if (opts.acknowledge && magic.rejected.length === 0) status(pain002Report(message.messageId, { group: { status: 'ACCP' }, blocks: [] }, 'pain.002.001.11'));
  if (magic.returned.length > 0) {
    const name = opts.name('NTF');
    answers.push({ name, xml: camt054(iban, name.slice(0, 35), magic.returned.map((credit, n) => ({ kind: 'return', ref: `${name}-${n}`, credit, code: 'AC04' }))) });
  }
  return answers;
}
