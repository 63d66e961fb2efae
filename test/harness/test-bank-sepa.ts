import { XMLBuilder } from 'fast-xml-parser';
import { formatAmount } from '../../src/domain/money';
import type { ReadCredit } from '../../src/providers/bank-files/sepa-messages';

// The SEPA messages the test bank sends back, written with fast-xml-parser's builder: status reports
// (pain.002.001.11) with rejections, and debit/credit notifications (camt.054.001.08) of credits
// for the platform and of its payments returned.

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
