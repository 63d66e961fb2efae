import fs from 'node:fs';
import path from 'node:path';
import { buildAchFile, readAchFile } from '../../src/providers/bank-files/nacha';
import { moovAnswerFile } from './moov-ach';
import { readPain001, type ReadCredit } from '../../src/providers/bank-files/sepa-messages';
import { waitFor } from './index';
import { odfiProblems } from './odfi-checks';
import { answersToPain001, camt054, camt054Batch } from '../../src/sandbox-bank/sepa-answers';
import { achMagicAnswers, CORRECTED_ACCOUNT } from '../../src/sandbox-bank/magic';
import { achBookings, depositLine, returnLine, sepaBookings } from '../../src/sandbox-bank/book';
import { rejectionNotice } from '../../src/sandbox-bank/sandbox-bank';
import { bai2Statement, camt053Statement, closingOf, type BookedLine } from '../../src/sandbox-bank/statements';

export { BLOCK_REJECTED_IBAN, CLOSED_IBAN, CORRECTED_ACCOUNT, MESSAGE_REJECTED_IBAN } from '../../src/sandbox-bank/magic';

// The bank on the other side of the SFTP server (a test counterpart, never the platform's code): it
// takes the files that land in its inbox after an ODFI's checks, and writes into its outbox what a
// bank sends back: returns (addenda 99), notifications of change (addenda 98) and credits that
// arrived for the platform. Magic amounts (docs/TRANSFERS.md) make it answer by itself; tests ask
// for the rest.

/** An entry of a file the bank took. */
export interface TakenEntry {
  file: string;
  transactionCode: string;
  routing: string;
  account: string;
  amountMinor: bigint;
  idNumber: string;
  name: string;
  trace: string;
  secCode: string;
  description: string;
  effectiveDate: string;
}

/** A SEPA credit transfer the bank took from a pain.001. */
export type TakenSepaCredit = ReadCredit & { file: string; messageId: string };

export class TestBank {
  private readonly seen = new Set<string>();
  private readonly taken = new Set<string>();
  readonly entries: TakenEntry[] = [];
  readonly sepaCredits: TakenSepaCredit[] = [];
  readonly rejected: { file: string; problems: string[] }[] = [];
  private written = 0;

  constructor(
    private readonly root: string,
    private readonly odfi: { routing: string; name: string; companyId: string; companyName: string; collectionAccount: string },
    /** The platform's SEPA account, and which of its inbox's files this bank takes (two test files may share the inbox, one format each). */
    private readonly opts: { sepaIban?: string; takes?: ('ach' | 'sepa')[] } = {},
  ) {}

  private get sepaIban() {
    return this.opts.sepaIban ?? 'DE89370400440532013000';
  }

  private get inbox() {
    return path.join(this.root, 'inbox');
  }

  private get outbox() {
    return path.join(this.root, 'outbox');
  }

  /** Takes the files that landed since the last call: checked, then their entries settled (or answered, for magic amounts). */
  takeInbox(): TakenEntry[] {
    const fresh: TakenEntry[] = [];
    // A test may take the inbox away (the bank's server refusing uploads): nothing to take meanwhile.
    if (!fs.statSync(this.inbox, { throwIfNoEntry: false })?.isDirectory()) return fresh;
    const takes = this.opts.takes ?? ['ach', 'sepa'];
    const format = (n: string) => (n.endsWith('.xml') ? 'sepa' : 'ach');
    for (const name of fs.readdirSync(this.inbox).filter((n) => !n.endsWith('.part') && takes.includes(format(n))).sort()) {
      if (this.taken.has(name)) continue;
      this.taken.add(name);
      const text = fs.readFileSync(path.join(this.inbox, name), 'utf8');
      if (name.endsWith('.xml')) {
        this.takeSepa(name, text);
        continue;
      }
      const refusal = this.refusal;
      this.refusal = undefined;
      const problems = refusal ? [refusal] : odfiProblems(text, this.seen);
      if (problems.length > 0) {
        this.rejected.push({ file: name, problems });
        // The bank's notice: the whole file refused, with why. The file leaves the inbox, so the
        // same name may come again once the problem is solved.
        this.put(`${name}.rejected`, rejectionNotice(name, problems));
        fs.mkdirSync(path.join(this.root, 'refused'), { recursive: true });
        fs.renameSync(path.join(this.inbox, name), path.join(this.root, 'refused', `${name}.${Date.now()}`));
        this.taken.delete(name);
        continue;
      }
      const file = readAchFile(text);
      this.books.us.lines.push(...achBookings(name, file, []));
      for (const batch of file.batches) {
        for (const e of batch.entries) {
          fresh.push({
            file: name, transactionCode: e.transactionCode, routing: `${e.receivingDFI}${e.checkDigit}`, account: e.DFIAccount,
            amountMinor: BigInt(e.amount), idNumber: e.idNumber, name: e.individualName, trace: e.traceNumber,
            secCode: batch.header.standardEntryClassCode, description: batch.header.companyEntryDescription, effectiveDate: batch.header.effectiveEntryDate,
          });
        }
      }
    }
    this.entries.push(...fresh);
    const { returns, changes } = achMagicAnswers(fresh);
    if (returns.length > 0) this.writeReturns(returns.map((entry) => ({ entry, code: 'R01' })));
    if (changes.length > 0) this.writeNotificationsOfChange(changes.map((entry) => ({ entry, code: 'C01', correctedData: CORRECTED_ACCOUNT })));
    return fresh;
  }

  /** A pain.001: its credit transfers taken; magic amounts answered (a rejection, or a return once booked). */
  private takeSepa(name: string, text: string) {
    let message;
    try {
      message = readPain001(text);
    } catch (err) {
      this.rejected.push({ file: name, problems: [(err as Error).message] });
      this.put(`${name}.rejected`, rejectionNotice(name, [(err as Error).message]));
      return;
    }
    const taken = message.credits.map((c) => ({ ...c, file: name, messageId: message.messageId }));
    this.sepaCredits.push(...taken);
    // Booked as the sandbox bank books it: the credits it accepted as one batch, each magic return as a credit back.
    this.books.sepa.lines.push(...sepaBookings(message));
    for (const answer of answersToPain001(message, this.sepaIban, { acknowledge: false, name: (kind) => this.nextName(kind, 'xml') })) this.put(answer.name, answer.xml);
  }

  /** A camt.054 of SEPA credit transfers sent back (AC04 closed account, AM04 insufficient funds, …). */
  writeSepaReturns(items: { credit: ReadCredit; code: string }[]): string {
    const name = this.nextName('NTF', 'xml');
    this.books.sepa.lines.push(...items.map((i) => returnLine('sepa', i.credit.endToEndId, i.credit.amountMinor, i.code)));
    this.put(name, camt054(this.sepaIban, name.slice(0, 35), items.map((i, n) => ({ kind: 'return', ref: `${name}-${n}`, ...i }))));
    return name;
  }

  /** A camt.054 of credits to the platform's SEPA account, each naming a deposit reference. */
  writeSepaCredits(items: { amountMinor: bigint; reference: string; senderName: string }[]): string {
    const name = this.nextName('NTF', 'xml');
    this.books.sepa.lines.push(...items.map((i, n) => depositLine(`${name}-${n}`, 'sepa', i.amountMinor, i.reference, i.senderName.toUpperCase())));
    this.put(name, camt054(this.sepaIban, name.slice(0, 35), items.map((i, n) => ({ kind: 'credit', ref: `${name}-${n}`, ...i }))));
    return name;
  }

  /** A camt.054 whose one entry books all `items` as a batch (one `Ntry`, a `TxDtls` each, no references of their own). */
  writeSepaBatchCredits(items: { amountMinor: bigint; reference: string; senderName: string }[]): string {
    const name = this.nextName('NTF', 'xml');
    this.put(name, camt054Batch(this.sepaIban, name.slice(0, 35), `${name}-BATCH`, items.map((i) => ({
      amountMinor: i.amountMinor, lines: ['SEPA CREDIT TRANSFER', `REF ${i.reference} FROM ${i.senderName.toUpperCase()}`], senderName: i.senderName,
    }))));
    return name;
  }

  /** Waits until the bank has taken a SEPA credit transfer `match` accepts. */
  waitForSepaCredit(match: (c: TakenSepaCredit) => boolean, timeoutMs = 30_000): Promise<TakenSepaCredit> {
    return this.waitToTake(() => this.sepaCredits.find(match), 'the bank to take such a SEPA credit', timeoutMs);
  }

  /** Takes the inbox until `found` finds something; on timeout, says which files the bank refused. */
  private waitToTake<T>(found: () => T | undefined, what: string, timeoutMs: number): Promise<T> {
    return waitFor(async () => {
      this.takeInbox();
      const value = found();
      if (value === undefined) throw new Error(`files refused: ${JSON.stringify(this.rejected)}`);
      return value;
    }, { what, timeoutMs, intervalMs: 250 });
  }

  private refusal?: string;

  /** The next ACH file the bank takes is refused whole, for `reason` (its own trouble, say), whatever its checks find. */
  refuseNextFile(reason: string) {
    this.refusal = reason;
  }

  private timer?: NodeJS.Timeout;

  /** Takes what lands in the inbox every `everyMs`, as a bank's file processing does, until stop(). */
  start(everyMs = 250): this {
    this.timer = setInterval(() => this.takeInbox(), everyMs);
    return this;
  }

  stop() {
    clearInterval(this.timer);
  }

  /** Waits until the bank has taken an entry `match` accepts. */
  waitForEntry(match: (e: TakenEntry) => boolean, timeoutMs = 30_000): Promise<TakenEntry> {
    return this.waitToTake(() => this.entries.find(match), 'the bank to take such an entry', timeoutMs);
  }

  /** A return file: each entry sent back with its R-code (written by moov-io/ach). */
  writeReturns(items: { entry: TakenEntry; code: string }[]): string {
    this.books.us.lines.push(...items.map(({ entry, code }) => returnLine('ach', entry.trace, entry.amountMinor, code)));
    return this.writeAnswerFile('return', items);
  }

  /** What the bank booked on each of the platform's accounts since its last statement, and that statement's number and closing balance. */
  private readonly books = {
    us: { lines: [] as BookedLine[], statements: 0, closingMinor: 0n },
    sepa: { lines: [] as BookedLine[], statements: 0, closingMinor: 0n },
  };

  /**
   * The US account's statement (BAI2) of what the bank booked since the last: each ACH batch it took,
   * each return it sent, each credit it sent. `edit` changes the lines first (a line dropped, one
   * added, one short), as a bank's mistakes or surprises would.
   */
  writeStatement(edit: (lines: BookedLine[]) => BookedLine[] = (l) => l): string {
    const input = this.statementOf('us', this.odfi.collectionAccount, 'usd', edit);
    const name = this.nextName('BAI', 'txt');
    this.put(name, bai2Statement({ ...input, bankId: this.odfi.routing, customerId: this.odfi.companyId }));
    return name;
  }

  /** The SEPA account's statement (camt.053.001.08) of what the bank booked since the last, `edit`ed first as for the US account's. */
  writeSepaStatement(edit: (lines: BookedLine[]) => BookedLine[] = (l) => l): string {
    const input = this.statementOf('sepa', this.sepaIban, 'eur', edit);
    const name = this.nextName('STM', 'xml');
    this.put(name, camt053Statement({ ...input, bic: 'COBADEFFXXX' }));
    return name;
  }

  /** The next statement of an account: its lines since the last (taken from the books), opening where the last closed. */
  private statementOf(which: 'us' | 'sepa', account: string, currency: string, edit: (lines: BookedLine[]) => BookedLine[]) {
    this.takeInbox();
    const book = this.books[which];
    const lines = edit(book.lines);
    book.lines = [];
    const input = { sequence: ++book.statements, at: new Date(), account, currency, openingMinor: book.closingMinor, lines };
    book.closingMinor = closingOf(input);
    return input;
  }

  /** A notification-of-change file: each entry with its C-code and corrected data (written by moov-io/ach). */
  writeNotificationsOfChange(items: { entry: TakenEntry; code: string; correctedData: string }[]): string {
    return this.writeAnswerFile('notification_of_change', items);
  }

  /** Credits that arrived for the platform's account, each naming a deposit reference (the NACHA library writes these). */
  async writeCredits(items: { amountMinor: bigint; reference: string; senderName: string }[]): Promise<string> {
    const name = this.nextName('CRD');
    this.books.us.lines.push(...items.map((item, i) => depositLine(`${name}-${i}`, 'ach', item.amountMinor, item.reference, item.senderName.toUpperCase())));
    const { text } = await buildAchFile(
      { odfiRouting: this.odfi.routing, odfiName: this.odfi.name, companyId: '9876543210', companyName: items[0].senderName.slice(0, 16), entryDescription: 'DEPOSIT' },
      items.map((item, i) => ({
        idNumber: item.reference, direction: 'credit', accountType: 'checking', routingNumber: this.odfi.routing, accountNumber: this.odfi.collectionAccount,
        amountMinor: item.amountMinor, name: this.odfi.companyName, secCode: 'CCD', effectiveDate: new Date().toISOString().slice(0, 10),
        traceNumber: `${this.odfi.routing.slice(0, 8)}${String(9_000_000 + this.written * 100 + i).padStart(7, '0')}`,
      })),
      { createdAt: new Date(), fileIdModifier: 'A' },
    );
    this.put(name, text);
    return name;
  }

  private nextName(kind: string, extension = 'ach'): string {
    return `${kind}-${Date.now()}-${++this.written}.${extension}`;
  }

  private put(name: string, text: string) {
    fs.writeFileSync(path.join(this.outbox, `${name}.part`), text);
    fs.renameSync(path.join(this.outbox, `${name}.part`), path.join(this.outbox, name));
  }

  /**
   * A file of answers, written by moov-io/ach rather than by the platform's own NACHA code: one batch
   * per SEC code (COR for notifications), each entry the original's with code 21/26 or 31/36.
   */
  private writeAnswerFile(kind: 'return' | 'notification_of_change', items: { entry: TakenEntry; code: string; correctedData?: string }[]): string {
    const text = moovAnswerFile({
      kind,
      odfi: { routing: this.odfi.routing, name: this.odfi.name, companyId: this.odfi.companyId, companyName: this.odfi.companyName },
      items: items.map(({ entry, code, correctedData }) => ({
        transactionCode: Number(entry.transactionCode), routing: entry.routing, account: entry.account, amountMinor: Number(entry.amountMinor),
        idNumber: entry.idNumber, name: entry.name, secCode: entry.secCode, trace: entry.trace, code, correctedData,
      })),
    });
    const name = this.nextName(kind === 'return' ? 'RET' : 'NOC');
    this.put(name, text);
    return name;
  }
}
