import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { buildAchFile } from '../providers/bank-files/nacha';
import { achText, sepaText } from '../providers/bank-files/rail-text';
import { camt054 } from './sepa-answers';
import type { StatementSettings } from './book';
import { depositLine, writeWhole } from './book';
import type { BookedLine } from './statements';

// Money arriving for the platform at the sandbox bank (docs/BANK_FILES.md, "In the sandbox"): a
// sandbox deposit asks for it (`requests/`), and the bank's next run sends it as banks do, a NACHA
// credit entry or a camt.054 credit notification naming the deposit reference, and books it.

export interface CreditRequest {
  rail: 'ach' | 'sepa';
  amountMinor: bigint;
  /** The deposit reference the sender wrote: it names the transfer that awaits the money. */
  reference: string;
  senderName: string;
}

let asked = 0;

/** Asks the sandbox bank to send a credit for the platform's account; it goes out in the bank's next run. */
export function requestCredit(root: string, credit: CreditRequest) {
  // Named in the order asked (the clock, then a counter within its millisecond), and short enough
  // for the references that carry it (35 characters at most).
  const id = `${Date.now().toString(36)}${(asked++ % 1296).toString(36).padStart(2, '0')}-${randomUUID().replaceAll('-', '').slice(0, 8)}`;
  writeWhole(path.join(root, 'requests', `${id}.json`), JSON.stringify({ ...credit, amountMinor: credit.amountMinor.toString() }));
}

/** Each credit asked for, as its file in the outbox and its booking; the request is then removed. Same names again after a crash. */
export async function sendRequestedCredits(bank: StatementSettings, now: Date): Promise<{ name: string; text: string; account: 'us' | 'sepa'; line: BookedLine; request: string }[]> {
  const dir = path.join(bank.root, 'requests');
  if (!fs.existsSync(dir)) return [];
  const out = [];
  for (const file of fs.readdirSync(dir).filter((n) => n.endsWith('.json')).sort()) {
    const raw = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
    const credit: CreditRequest = { ...raw, amountMinor: BigInt(raw.amountMinor) };
    const id = file.replace(/\.json$/, '');
    const line = depositLine(id, credit.rail, credit.amountMinor, credit.reference, achText(credit.senderName, 40));
    const text = credit.rail === 'ach' ? await achCredit(bank, credit, id, now) : camt054(bank.sepa.iban, `NTF-CRD-${id}`.slice(0, 35), [{
      kind: 'credit', ref: `SB-CRD-${id}`, amountMinor: credit.amountMinor, reference: credit.reference, senderName: sepaText(credit.senderName, 70) || 'Sender',
    }]);
    out.push({ name: credit.rail === 'ach' ? `CRD-${id}.ach` : `NTF-CRD-${id}.xml`, text, account: credit.rail === 'ach' ? 'us' as const : 'sepa' as const, line, request: path.join(dir, file) });
  }
  return out;
}

/** A NACHA file of one credit into the platform's collection account, from the sender's company. */
async function achCredit(bank: StatementSettings, credit: CreditRequest, id: string, now: Date): Promise<string> {
  const { text } = await buildAchFile(
    { odfiRouting: bank.us.bankId, odfiName: 'SANDBOX BANK', companyId: '9876543210', companyName: achText(credit.senderName, 16) || 'SENDER', entryDescription: 'DEPOSIT' },
    [{
      idNumber: credit.reference.slice(0, 15), direction: 'credit', accountType: 'checking', routingNumber: bank.us.bankId, accountNumber: bank.us.account,
      amountMinor: credit.amountMinor, name: achText(bank.us.name, 22), secCode: 'CCD', effectiveDate: now.toISOString().slice(0, 10),
      traceNumber: `${bank.us.bankId.slice(0, 8)}${id.replace(/\D/g, '').slice(-7).padStart(7, '0')}`,
    }],
    { createdAt: now, fileIdModifier: 'A' },
  );
  return text;
}
