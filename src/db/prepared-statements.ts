import { createHash } from 'node:crypto';
import pg from 'pg';

/** Distinct statement texts named per process; beyond it (lists of ids of every length, say) they run unnamed. */
const MAX_NAMED_STATEMENTS = 1000;
/** Longer texts (batch inserts of many rows) are rarely the same twice: not worth a prepared statement. */
const MAX_NAMED_TEXT_LENGTH = 8000;

const names = new Map<string, string>();

function statementName(text: string): string | undefined {
  const known = names.get(text);
  if (known || text.length > MAX_NAMED_TEXT_LENGTH || names.size >= MAX_NAMED_STATEMENTS) return known;
  const name = `s${createHash('sha256').update(text).digest('base64url').slice(0, 24)}`;
  names.set(text, name);
  return name;
}

/** PostgreSQL's answer when a prepared statement's result columns changed under it (a migration added a column, say). */
const isStalePlan = (err: unknown) =>
  (err as { code?: string })?.code === '0A000' && /cached plan must not change result type/.test((err as Error).message);

/**
 * A pg client that names each statement with parameters by a hash of its text, so that PostgreSQL
 * parses and plans it once per connection instead of at every execution (the hot path runs the same
 * few dozen statements thousands of times). A migration that changes a prepared statement's result
 * columns fails its next execution once (the caller's transaction fails; its retry runs), and this
 * connection prepares its statements again under new names from then on.
 */
export class PreparingClient extends pg.Client {
  private generation = 0;

  // pg's query() has many overloads; kysely calls query(text, values) and awaits the promise.
  override query(...args: unknown[]): any {
    const run = super.query as (...a: unknown[]) => any;
    const [text, values, callback] = args;
    const base = typeof text === 'string' && Array.isArray(values) && values.length > 0 && callback === undefined ? statementName(text) : undefined;
    if (!base) return run.apply(this, args);
    return (run.call(this, { name: `${base}_${this.generation}`, text, values }) as Promise<unknown>).catch((err: unknown) => {
      if (isStalePlan(err)) this.generation++;
      throw err;
    });
  }
}
