// Matching a bank statement's lines against what the platform's books say the bank should show
// (docs/RECONCILIATION.md): by reference first, then by amount, date and counterparty within the
// tolerances a payment team sets. Pure: the caller reads both sides and records the outcome.

export type Direction = 'credit' | 'debit';

/**
 * A line on either side: the bank's statement (a BAI2 transaction, a camt.053 entry or one of its
 * transactions), or what the books say the statement should show (a file's batch, a deposit, a
 * return, a fee).
 */
export interface ReconciliationLine {
  id: string;
  direction: Direction;
  amountMinor: bigint;
  /** YYYY-MM-DD */
  date: string;
  /** Every reference the line carries (bank reference, end-to-end id, our message or block id). */
  references: string[];
  counterparty: string;
}
export type StatementLine = ReconciliationLine;
export type ExpectedLine = ReconciliationLine;

/** A line's amount as the account moves by it: credits in (positive), debits out (negative). */
export const signedMinor = (line: Pick<ReconciliationLine, 'direction' | 'amountMinor'>) => (line.direction === 'credit' ? line.amountMinor : -line.amountMinor);

/** A line as an exception keeps it (jsonb): the amount as a decimal string of minor units. */
export const lineJson = (line: ReconciliationLine) => JSON.stringify({ ...line, amountMinor: line.amountMinor.toString() });

/** A line an exception kept (lineJson), read back; null for the side it does not have. */
export function storedLine(json: unknown): ReconciliationLine | null {
  if (!json) return null;
  const l = json as Omit<ReconciliationLine, 'amountMinor'> & { amountMinor: string };
  return { ...l, amountMinor: BigInt(l.amountMinor) };
}

export interface Tolerances {
  /** How much less than expected a credit may arrive and still match (a correspondent bank's fee on a wire); debits match exactly. */
  shortfallMinor: bigint;
  /** How many days a line's date may be from the expected one for a match without a reference. */
  days: number;
}

export interface Match {
  lineId: string;
  expectedId: string;
  by: 'reference' | 'amount_and_date';
  /** Expected less received: a fee within the tolerance. */
  differenceMinor: bigint;
}

export type ReconciliationException =
  | { type: 'missing_from_statement'; expected: ExpectedLine }
  | { type: 'unexpected_on_statement'; line: StatementLine }
  | { type: 'amount_mismatch'; line: StatementLine; expected: ExpectedLine; differenceMinor: bigint };

const normalized = (ref: string) => ref.trim().toUpperCase();
const dayNumber = (date: string) => Math.floor(Date.parse(`${date}T00:00:00Z`) / 86_400_000);
const sameParty = (a: string, b: string) => !a.trim() || !b.trim() || normalized(a) === normalized(b);

/** Whether `received` stands for `expected` as far as amounts go: equal, or a credit short by at most the tolerance. */
function withinShortfall(direction: Direction, expected: bigint, received: bigint, t: Tolerances): boolean {
  if (direction === 'debit') return received === expected;
  return received <= expected && expected - received <= t.shortfallMinor;
}

/**
 * Matches every line it can, each line and each expected line at most once, and names the rest:
 * expected lines the statement lacks, lines nobody expected, and references that match with an
 * amount beyond the tolerance. Deterministic: the same inputs give the same answer.
 */
export function matchStatement(lines: StatementLine[], expected: ExpectedLine[], t: Tolerances): { matches: Match[]; exceptions: ReconciliationException[] } {
  const open = new Map([...expected].sort((a, b) => a.id.localeCompare(b.id)).map((e) => [e.id, e]));
  const byReference = new Map<string, ExpectedLine[]>();
  for (const e of open.values()) for (const r of e.references.filter((x) => x.trim())) byReference.set(normalized(r), [...(byReference.get(normalized(r)) ?? []), e]);
  const matches: Match[] = [];
  const exceptions: ReconciliationException[] = [];
  const unmatched: StatementLine[] = [];
  for (const line of [...lines].sort((a, b) => a.id.localeCompare(b.id))) {
    const named = [...new Set(line.references.flatMap((r) => byReference.get(normalized(r)) ?? []))]
      .filter((e) => open.has(e.id) && e.direction === line.direction);
    const exact = named.find((e) => e.amountMinor === line.amountMinor) ?? named.find((e) => withinShortfall(line.direction, e.amountMinor, line.amountMinor, t));
    const candidate = exact ?? (named.length === 1 ? named[0] : undefined);
    if (!candidate) {
      unmatched.push(line);
      continue;
    }
    open.delete(candidate.id);
    const differenceMinor = candidate.amountMinor - line.amountMinor;
    if (exact) matches.push({ lineId: line.id, expectedId: candidate.id, by: 'reference', differenceMinor });
    else exceptions.push({ type: 'amount_mismatch', line, expected: candidate, differenceMinor });
  }
  for (const line of unmatched) {
    const found = closestByAmountAndDate(line, [...open.values()], t);
    if (!found) {
      exceptions.push({ type: 'unexpected_on_statement', line });
      continue;
    }
    open.delete(found.id);
    matches.push({ lineId: line.id, expectedId: found.id, by: 'amount_and_date', differenceMinor: found.amountMinor - line.amountMinor });
  }
  for (const e of open.values()) exceptions.push({ type: 'missing_from_statement', expected: e });
  return { matches, exceptions };
}

/** Without a reference: same direction and counterparty, the amount within the tolerance, the nearest date within its days (exact amounts first). */
function closestByAmountAndDate(line: StatementLine, open: ExpectedLine[], t: Tolerances): ExpectedLine | undefined {
  const day = dayNumber(line.date);
  const fits = open.filter((e) => e.direction === line.direction && sameParty(e.counterparty, line.counterparty)
    && withinShortfall(line.direction, e.amountMinor, line.amountMinor, t) && Math.abs(dayNumber(e.date) - day) <= t.days);
  const rank = (e: ExpectedLine) => [e.amountMinor === line.amountMinor ? 0 : 1, Math.abs(dayNumber(e.date) - day)] as const;
  return fits.sort((a, b) => {
    const [ra, rb] = [rank(a), rank(b)];
    return ra[0] - rb[0] || ra[1] - rb[1] || a.id.localeCompare(b.id);
  })[0];
}
