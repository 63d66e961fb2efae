import fs from 'node:fs';
import path from 'node:path';
import { readAchFile } from '../providers/bank-files/nacha';
import { readPain001 } from '../providers/bank-files/sepa-messages';
import { buildAchAnswerFile, type AnsweredEntry } from './ach-answers';
import { achMagicAnswers, CORRECTED_ACCOUNT } from './magic';
import { answersToPain001 } from './sepa-answers';

// The sandbox bank (docs/BANK_FILES.md, "In the sandbox"): the bank on the other side of `npm
// start`'s SFTP server, reading its own folders. Every file the platform put in its inbox is taken
// once and answered in the outbox as a bank answers: SEPA messages acknowledged or rejected by
// pain.002, returned by camt.054; ACH entries returned or corrected by the magic values. A file it
// cannot read is refused with a rejection notice. Taken files move to `taken/`.

export interface SandboxBankSettings {
  /** The folder the SFTP server serves, with `inbox` and `outbox`. */
  root: string;
  /** The platform's SEPA account, which the bank's notifications name. */
  sepaIban: string;
}

interface Answer {
  name: string;
  text: string;
}

/** Takes each file in the inbox once: its answers written, then the file moved to `taken/`. A crash in between writes the same answers again, under the same names. */
export function answerInbox(bank: SandboxBankSettings, now = new Date()): { taken: string[]; answers: string[] } {
  const inbox = path.join(bank.root, 'inbox');
  const taken = path.join(bank.root, 'taken');
  fs.mkdirSync(taken, { recursive: true });
  const out = { taken: [] as string[], answers: [] as string[] };
  for (const name of fs.readdirSync(inbox).filter((n) => !n.endsWith('.part')).sort()) {
    const text = fs.readFileSync(path.join(inbox, name), 'utf8');
    for (const answer of answersTo(bank, name, text, now)) {
      put(path.join(bank.root, 'outbox'), answer);
      out.answers.push(answer.name);
    }
    fs.renameSync(path.join(inbox, name), path.join(taken, name));
    out.taken.push(name);
  }
  return out;
}

/** The bank's answers to one file of the platform's. */
export function answersTo(bank: Pick<SandboxBankSettings, 'sepaIban'>, name: string, text: string, now: Date): Answer[] {
  const base = name.replace(/\.[a-z]+$/, '');
  try {
    if (name.endsWith('.xml')) {
      let n = 0;
      return answersToPain001(readPain001(text), bank.sepaIban, { acknowledge: true, name: (kind) => `${kind}-${base}-${++n}.xml` })
        .map((a) => ({ name: a.name, text: a.xml }));
    }
    return achAnswers(base, text, now);
  } catch (err) {
    return [{ name: `${name}.rejected`, text: ['FILE REJECTED', `FILE: ${name}`, `REASON: ${(err as Error).message}`, ''].join('\n') }];
  }
}

function achAnswers(base: string, text: string, now: Date): Answer[] {
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
  return answers;
}

/** Written whole or not at all: the platform never reads half a file. */
function put(outbox: string, answer: Answer) {
  fs.writeFileSync(path.join(outbox, `${answer.name}.part`), answer.text);
  fs.renameSync(path.join(outbox, `${answer.name}.part`), path.join(outbox, answer.name));
}
