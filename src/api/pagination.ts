import { sql, type SelectQueryBuilder } from 'kysely';
import { z } from 'zod';
import { invalidField } from '../errors';

/** Query parameters every list endpoint takes. */
export const listParams = {
  limit: z.coerce.number().int().min(1).max(100).default(10),
  cursor: z.string().optional(),
  created_after: z.iso.datetime({ offset: true }).optional(),
  created_before: z.iso.datetime({ offset: true }).optional(),
};

export function listSchema<T extends z.ZodType>(item: T, name: string) {
  return z
    .object({
      object: z.literal('list'),
      data: z.array(item),
      has_more: z.boolean(),
      cursor: z.string().regex(/^cur_[0-9A-Za-z_-]+$/).optional(),
    })
    .meta({ id: `${name}List` });
}

interface Position {
  t: string;
  id: string;
}

function encodeCursor(p: Position): string {
  return 'cur_' + Buffer.from(JSON.stringify([p.t, p.id])).toString('base64url');
}

// What encodeCursor writes: a millisecond ISO timestamp PostgreSQL can hold, and an object id.
const CURSOR_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const CURSOR_ID = /^[a-z]{2,5}_[0-9A-Za-z]{1,64}$/;

function decodeCursor(cursor: string): Position {
  try {
    if (!cursor.startsWith('cur_')) throw new Error();
    const [t, id] = JSON.parse(Buffer.from(cursor.slice(4), 'base64url').toString('utf8'));
    if (typeof t !== 'string' || typeof id !== 'string' || !CURSOR_TIME.test(t) || !CURSOR_ID.test(id)) throw new Error();
    // An invalid date throws in toISOString; one that rolls over (02-30) comes back different.
    if (t < '1970' || new Date(t).toISOString() !== t) throw new Error();
    return { t, id };
  } catch {
    throw invalidField('query', 'cursor', "Invalid 'cursor': use the cursor value of the previous page");
  }
}

/**
 * Keyset pagination, newest first by (created_at, id). A page starts strictly after the last row
 * of the previous one, so rows inserted while a client pages never duplicate or shift items.
 */
export async function paginate<DB, TB extends keyof DB, O extends { id: string; created_at: Date }, T>(
  query: SelectQueryBuilder<DB, TB, O>,
  params: { limit: number; cursor?: string; created_after?: string; created_before?: string },
  serialize: (row: O) => T,
) {
  let q: SelectQueryBuilder<any, any, O> = query as any;
  if (params.created_after) q = q.where('created_at', '>', new Date(params.created_after));
  if (params.created_before) q = q.where('created_at', '<', new Date(params.created_before));
  if (params.cursor) {
    const pos = decodeCursor(params.cursor);
    q = q.where(sql<boolean>`(created_at, id) < (${new Date(pos.t)}, ${pos.id})`);
  }
  const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(params.limit + 1).execute();
  const hasMore = rows.length > params.limit;
  const page = rows.slice(0, params.limit);
  const last = page[page.length - 1];
  return {
    object: 'list' as const,
    data: page.map(serialize),
    has_more: hasMore,
    ...(hasMore && last ? { cursor: encodeCursor({ t: last.created_at.toISOString(), id: last.id }) } : {}),
  };
}
