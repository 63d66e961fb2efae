import fs from 'node:fs';
import path from 'node:path';
import { readAchFile } from '../providers/bank-files/nacha';
import { readPain001 } from '../providers/bank-files/sepa-messages';
import { buildAchAnswerFile, type AnsweredEntry } from './ach-answers';
import { achBookings, keepBookings, sepaBookings, writeWhole, type BankAccount, type StatementSettings } from './book';
import { achMagicAnswers, CORRECTED_ACCOUNT } from './magic';
import { answersToPain001 } from './sepa-answers';
import { sendRequestedCredits } from './credits';
import type { BookedLine } from './statements';

// The sandbox bank (docs/BANK_FILES.md, "In the sandbox"): the bank on the other side of `npm
// start`'s SFTP server, reading its own folders. Every file the platform put in its inbox is taken
// once and answered in the outbox as a bank answers: SEPA messages acknowledged or rejected by
// pain.002, returned by camt.054; ACH entries returned or corrected by the magic values. A file it
// cannot read is refused with a rejection notice. What a file moves is booked (book.ts) for the
// end-of-day statements. Taken files move to `taken/`.

/** The folder the SFTP server serves (with `inbox` and `outbox`), and the platform's accounts at the bank. */
export type SandboxBankSettings = StatementSettings;

interface Answer {
  name: string;
  text: string;
}

/** A file's answers, and what it booked on which account. */
interface Taken {
  answers: Answer[];
  booked: { account: BankAccount; lines: BookedLine[] };
}

/**
 * One run of the bank: the credits asked for sent (credits.ts), then each file in the inbox taken
 * once: its answers written and its bookings kept, then the file moved to `taken/`. A crash in
 * between writes the same answers again, under the same names.
 */
export async function runSandboxBank(bank: SandboxBankSettings, now = new Date()): Promise<{ taken: string[]; answers: string[] }> {
  const credits = await sendRequestedCredits(bank, now);
  for (const credit of credits) {
    writeWhole(path.join(bank.root, 'outbox', credit.name), credit.text);
    keepBookings(bank.root, path.basename(credit.request), credit.account, [credit.line]);
    fs.rmSync(credit.request);
  }
  const answered = answerInbox(bank, now);
  return { taken: answered.taken, answers: [...credits.map((c) => c.name), ...answered.answers] };
}

/** Takes each file in the inbox once: its answers written, then the file moved to `taken/`. A crash in between writes the same answers again, under the same names. */
export function answerInbox(bank: SandboxBankSettings, now = new Date()): { taken: string[]; answers: string[] } {
  const inbox = path.join(bank.root, 'inbox');
  const taken = path.join(bank.root, 'taken');
  fs.mkdirSync(taken, { recursive: true });
  const out = { taken: [] as string[], answers: [] as string[] };
  for (const name of fs.readdirSync(inbox).filter((n) => !n.endsWith('.part')).sort()) {
    const text = fs.readFileSync(path.join(inbox, name), 'utf8');
    const { answers, booked } = answersTo(bank, name, text, now);
    for (const answer of answers) {
      writeWhole(path.join(bank.root, 'outbox', answer.name), answer.text);
      out.answers.push(answer.name);
    }
    keepBookings(bank.root, name, booked.account, booked.lines);
    fs.renameSync(path.join(inbox, name), path.join(taken, name));
    out.taken.push(name);
  }
  return out;
}

/** The bank's answers to one file of the platform's, and what it books. */
export function answersTo(bank: Pick<SandboxBankSettings, 'sepa'>, name: string, text: string, now: Date): Taken {
  const base = name.replace(/\.[a-z]+$/, '');
  try {
    if (name.endsWith('.xml')) {
      const message = readPain001(text);
      let n = 0;
      const answers = answersToPain001(message, bank.sepa.iban, { acknowledge: true, name: (kind) => `${kind}-${base}-${++n}.xml` })
        .map((a) => ({ name: a.name, text: a.xml }));
      return { answers, booked: { account: 'sepa', lines: sepaBookings(message) } };
    }
    return achAnswers(name, base, text, now);
  } catch (err) {
    return { answers: [{ name: `${name}.rejected`, text: rejectionNotice(name, [(err as Error).message]) }], booked: { account: 'us', lines: [] } };
  }
}

/** The notice a bank sends when it refuses a whole file: `FILE REJECTED`, the file's name, a line per reason (docs/BANK_FILES.md). */
export function rejectionNotice(file: string, reasons: string[]): string {
  return ['FILE REJECTED', `FILE: ${file}`, ...reasons.map((r) => `REASON: ${r}`), ''].join('\n');
}

function achAnswers(name: string, base: string, text: string, now: Date): Taken {
  const file = readAchFile(text);
  const entries = file.batches.flatMap((batch) => batch.entries.map((entry): AnsweredEntry & { amountMinor: bigint; description: string } => ({
    batchHeader: batch.header, entry, code: '', amountMinor: BigInt(entry.amount), description: batch.header.companyEntryDescription,
  })));
  const { returns, changes } = achMagicAnswers(entries);
  const answers: Answer[] = [];
  if (returns.length > 0) {
    answers.push({ name: `RET-${base}.ach`, text: buildAchAnswerFile('return', file.header, returns.map((e) => ({ ...e, code: 'R01' })), now) });
  }
  if (changes.length > 0) {
    answers.push({
      name: `NOC-${base}.ach`,
      text: buildAchAnswerFile('notification_of_change', file.header, changes.map((e) => ({ ...e, code: 'C01', correctedData: CORRECTED_ACCOUNT })), now),
    });
  }
  return { answers, booked: { account: 'us', lines: achBookings(name, file, returns.map((r) => r.entry.traceNumber)) } };
}
