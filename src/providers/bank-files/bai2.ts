// BAI2 ("Cash Management Balance Reporting Specifications", version 2): the end-of-day statement a
// US bank sends for an account (docs/BANK_FILES.md). No maintained reader is published for Node, so
// this one reads the format as banks write it: records ended by `/` or by the line's end, several
// records on one line, a record broken over lines, `88` continuations of a summary or of a
// transaction's text. Every total the file states is checked: a disagreement is kept with the file
// (`problems`) for the reconciliation to raise, since some banks' trailers are wrong and the
// entries still have to be read.

/** A balance or summary of an account (its `03` record): a BAI type code, its amount if given, its item count. */
export interface Bai2Summary {
  typeCode: string;
  amountMinor: bigint | null;
  itemCount: number | null;
  fundsType: string;
}

/** A transaction of an account (`16`): credits have type codes 100–399, debits 400–699. */
export interface Bai2Transaction {
  typeCode: string;
  direction: 'credit' | 'debit' | 'other';
  amountMinor: bigint;
  fundsType: string;
  bankReference: string;
  customerReference: string;
  /** Its text, continuations joined by a newline. */
  text: string;
}

export interface Bai2Account {
  number: string;
  /** The account's currency, else its group's. */
  currency: string;
  summaries: Bai2Summary[];
  transactions: Bai2Transaction[];
}

export interface Bai2Group {
  originator: string;
  receiver: string;
  /** 1 update, 2 deletion, 3 correction, 4 test only. */
  status: string;
  asOfDate: string;
  asOfTime: string;
  accounts: Bai2Account[];
}

export interface Bai2File {
  /** Where a trailer's stated total or record count disagrees with the records it closes. */
  problems: string[];
  sender: string;
  receiver: string;
  creationDate: string;
  creationTime: string;
  fileId: string;
  groups: Bai2Group[];
}

const RECORD_START = /^(01|02|03|16|49|88|98|99),/;

/** One logical record: its code, its fields (its `88` continuations' appended), and how many physical records made it. */
interface RawRecord {
  code: string;
  fields: string[];
  /** A `16`'s text lines, once its fixed fields ended: its own, then each continuation's (empty until its text begins). */
  text: string[];
  records: number;
}

/**
 * The physical records of a file: a line may hold several (each ended by `/`), and a line that does
 * not start with a record code carries on the record before it.
 */
function physicalRecords(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === '') continue;
    const parts = line.split(/\/\s*(?=(?:01|02|03|16|49|88|98|99),)/);
    parts.forEach((part, i) => {
      if (i === 0 && !RECORD_START.test(part.trimStart()) && out.length > 0) out[out.length - 1] += ` ${part.trim()}`;
      else out.push(part.trimStart());
    });
  }
  return out;
}

/** Where a `16`'s text starts: after type, amount, funds type (with its extra fields), bank and customer references. */
function transactionTextIndex(fields: string[]): number {
  return fundsTypeEnd(fields, 2) + 2;
}

/** The index after a funds type at `at` and its extra fields (S: three amounts; V: date and time; D: a count and that many pairs). */
function fundsTypeEnd(fields: string[], at: number): number {
  const type = (fields[at] ?? '').trim();
  if (type === 'S') return at + 4;
  if (type === 'V') return at + 3;
  if (type === 'D') return at + 2 + 2 * Number(fields[at + 1] || 0);
  return at + 1;
}

const unterminated = (record: string) => record.replace(/\/\s*$/, '');

function logicalRecords(text: string): RawRecord[] {
  const out: RawRecord[] = [];
  for (const physical of physicalRecords(text)) {
    const match = RECORD_START.exec(physical);
    if (!match) throw new Error(`BAI2: "${physical.slice(0, 40)}" is not a record`);
    const code = match[1]!;
    const body = unterminated(physical.slice(3));
    const last = out[out.length - 1];
    if (code === '88') {
      if (!last) throw new Error('BAI2: a continuation (88) with no record before it');
      last.records += 1;
      if (last.code === '16' && last.text.length > 0) last.text.push(body.trim());
      else appendFields(last, body);
      continue;
    }
    const record: RawRecord = { code, fields: [], text: [], records: 1 };
    appendFields(record, body);
    out.push(record);
  }
  return out;
}

/** Appends a record's fields; a `16`'s text (everything after its fixed fields, commas included) is kept whole. */
function appendFields(record: RawRecord, body: string) {
  const fields = [...record.fields, ...body.split(',')];
  if (record.code !== '16') {
    record.fields = fields;
    return;
  }
  const textAt = transactionTextIndex(fields);
  record.fields = fields.slice(0, textAt);
  if (fields.length > textAt) record.text.push(fields.slice(textAt).join(',').trim());
}

function minor(value: string | undefined, what: string): bigint | null {
  const v = (value ?? '').trim();
  if (v === '') return null;
  if (!/^[+-]?\d+$/.test(v)) throw new Error(`BAI2: ${what} "${v}" is not an amount`);
  return BigInt(v);
}

const count = (value: string | undefined) => ((value ?? '').trim() === '' ? null : Number(value));

function directionOf(typeCode: string): Bai2Transaction['direction'] {
  const n = Number(typeCode);
  if (n >= 100 && n < 400) return 'credit';
  if (n >= 400 && n < 700) return 'debit';
  return 'other';
}

/** An account's summaries: after its number and currency, groups of type code, amount, item count and funds type. */
function accountOf(record: RawRecord, groupCurrency: string): Bai2Account {
  const [number = '', currency = '', ...rest] = record.fields;
  const summaries: Bai2Summary[] = [];
  for (let at = 0; at < rest.length;) {
    const typeCode = (rest[at] ?? '').trim();
    // An empty group (some banks lead with one): four empty fields.
    if (typeCode === '') {
      at += 4;
      continue;
    }
    summaries.push({ typeCode, amountMinor: minor(rest[at + 1], `summary ${typeCode}`), itemCount: count(rest[at + 2]), fundsType: (rest[at + 3] ?? '').trim() });
    at = fundsTypeEnd(rest, at + 3);
  }
  return { number: number.trim(), currency: currency.trim() || groupCurrency, summaries, transactions: [] };
}

function transactionOf(record: RawRecord): Bai2Transaction {
  const f = record.fields;
  const textAt = transactionTextIndex(f);
  const typeCode = (f[0] ?? '').trim();
  const amountMinor = minor(f[1], `transaction ${typeCode}`);
  if (amountMinor === null) throw new Error(`BAI2: transaction ${typeCode} has no amount`);
  return {
    typeCode, direction: directionOf(typeCode), amountMinor, fundsType: (f[2] ?? '').trim(),
    bankReference: (f[textAt - 2] ?? '').trim(), customerReference: (f[textAt - 1] ?? '').trim(), text: record.text.filter(Boolean).join('\n'),
  };
}

/** What an account contributes to its control total: every amount of its summaries and transactions. */
const accountTotal = (a: Bai2Account) => a.summaries.reduce((s, x) => s + (x.amountMinor ?? 0n), 0n) + a.transactions.reduce((s, t) => s + t.amountMinor, 0n);

function trailerProblems(what: string, stated: { total: bigint | null; records: number | null }, counted: { total: bigint; records: number }): string[] {
  const problems: string[] = [];
  if (stated.total !== null && stated.total !== counted.total) problems.push(`${what} states a total of ${stated.total}; its records add up to ${counted.total}`);
  if (stated.records !== null && stated.records !== counted.records) problems.push(`${what} states ${stated.records} records; it has ${counted.records}`);
  return problems;
}

/** Reads a BAI2 file; throws, naming the record, when it is not one (records out of place, no trailer, an amount that is not one). */
export function readBai2(text: string): Bai2File {
  const records = logicalRecords(text);
  const header = records[0];
  if (header?.code !== '01') throw new Error('BAI2: a file starts with its header (01)');
  const [sender = '', receiver = '', creationDate = '', creationTime = '', fileId = ''] = header.fields.map((f) => f.trim());
  const file: Bai2File = { problems: [], sender, receiver, creationDate, creationTime, fileId, groups: [] };
  let group: (Bai2Group & { currency: string; total: bigint; records: number }) | undefined;
  let account: (Bai2Account & { records: number }) | undefined;
  let fileCount = { total: 0n, records: header.records };
  for (const record of records.slice(1)) {
    fileCount.records += record.records;
    if (record.code === '02') {
      const [rcv = '', originator = '', status = '', asOfDate = '', asOfTime = '', currency = ''] = record.fields.map((f) => f.trim());
      group = { receiver: rcv, originator, status, asOfDate, asOfTime, accounts: [], currency, total: 0n, records: record.records };
    } else if (record.code === '03') {
      if (!group) throw new Error('BAI2: an account (03) outside a group');
      account = { ...accountOf(record, group.currency), records: record.records };
      group.records += record.records;
    } else if (record.code === '16') {
      if (!account || !group) throw new Error('BAI2: a transaction (16) outside an account');
      account.transactions.push(transactionOf(record));
      account.records += record.records;
      group.records += record.records;
    } else if (record.code === '49') {
      if (!account || !group) throw new Error('BAI2: an account trailer (49) with no account');
      account.records += record.records;
      group.records += record.records;
      const { records: counted, ...done } = account;
      const total = accountTotal(done);
      file.problems.push(...trailerProblems(`account ${done.number}'s trailer`, { total: minor(record.fields[0], 'account total'), records: count(record.fields[1]) }, { total, records: counted }));
      group.accounts.push(done);
      group.total += total;
      account = undefined;
    } else if (record.code === '98') {
      if (!group || account) throw new Error('BAI2: a group trailer (98) with no group, or inside an account');
      group.records += record.records;
      file.problems.push(...trailerProblems(`group ${group.originator}'s trailer`, { total: minor(record.fields[0], 'group total'), records: count(record.fields[2]) }, { total: group.total, records: group.records }));
      const { currency: _c, total, records: _r, ...done } = group;
      file.groups.push(done);
      fileCount = { ...fileCount, total: fileCount.total + total };
      group = undefined;
    } else if (record.code === '99') {
      if (group) throw new Error('BAI2: the file trailer (99) inside a group');
      file.problems.push(...trailerProblems('the file trailer', { total: minor(record.fields[0], 'file total'), records: count(record.fields[2]) }, fileCount));
      return file;
    } else {
      throw new Error(`BAI2: a ${record.code} record where it cannot be`);
    }
  }
  throw new Error('BAI2: the file has no trailer (99): cut short?');
}
