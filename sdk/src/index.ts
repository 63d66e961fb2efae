import { randomUUID } from 'node:crypto';
import createFetchClient, { type Client } from 'openapi-fetch';
import type { components, paths, webhooks } from './schema';

export type { components, paths, webhooks };
export { verifyWebhook, WebhookVerificationError, type WebhookEvent } from './webhooks';

export type Schemas = components['schemas'];
export type ErrorCode = Schemas['Error']['error']['code'];

/** An error answer of the API: its status, code, message and the field it names, with the request's id. */
export class FinancialPlatformError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly source: Schemas['Error']['error']['source'],
    readonly requestId: string | null,
  ) {
    super(message);
    this.name = 'FinancialPlatformError';
  }
}

export interface ClientOptions {
  /** sk_test_… / sk_live_… on servers; pk_… (publishable) in browsers. */
  apiKey: string;
  /** Default http://localhost:3000 (`npm start`). */
  baseUrl?: string;
  /** Retries of a 429, a 5xx or a network error, with the same Idempotency-Key (default 3). */
  maxRetries?: number;
  /** First backoff when the answer gives no Retry-After, doubled each retry (default 500 ms). */
  retryBaseMs?: number;
  fetch?: (request: Request) => Promise<Response>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const retryable = (status: number) => status === 429 || status >= 500;

/**
 * A fetch that sends a request again on 429 (after Retry-After), 5xx and network errors. The request
 * is the same each time, its Idempotency-Key included: a retried POST cannot act twice.
 */
function retryingFetch(opts: Required<Pick<ClientOptions, 'maxRetries' | 'retryBaseMs'>> & { fetch: (r: Request) => Promise<Response> }) {
  return async (request: Request): Promise<Response> => {
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= opts.maxRetries;
      let response: Response;
      try {
        response = await opts.fetch(request.clone());
      } catch (err) {
        if (last) throw err;
        await sleep(opts.retryBaseMs * 2 ** attempt);
        continue;
      }
      if (last || !retryable(response.status)) return response;
      const retryAfter = Number(response.headers.get('Retry-After'));
      await sleep(Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : opts.retryBaseMs * 2 ** attempt);
    }
  };
}

export type FinancialPlatformClient = Client<paths> & {
  /** The data of an answer, or its error thrown as a FinancialPlatformError. */
  unwrap: typeof unwrap;
  /** Every item of a list, page after page. */
  paginate: typeof paginate;
};

/** A client of the API: typed paths, the Api-Key header, an Idempotency-Key on every POST, retries. */
export function createClient(options: ClientOptions): FinancialPlatformClient {
  const client = createFetchClient<paths>({
    baseUrl: options.baseUrl ?? 'http://localhost:3000',
    headers: { 'Api-Key': options.apiKey },
    fetch: retryingFetch({ maxRetries: options.maxRetries ?? 3, retryBaseMs: options.retryBaseMs ?? 500, fetch: options.fetch ?? ((r) => fetch(r)) }),
  });
  client.use({
    onRequest({ request }) {
      if (request.method === 'POST' && !request.headers.has('Idempotency-Key')) request.headers.set('Idempotency-Key', randomUUID());
      return request;
    },
  });
  return Object.assign(client, { unwrap, paginate });
}

/** The data of an openapi-fetch result, or a FinancialPlatformError for its error answer. */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.data !== undefined && result.response.ok) return result.data;
  const body = (result.error ?? {}) as Partial<Schemas['Error']>;
  throw new FinancialPlatformError(
    result.response.status, body.error?.code ?? 'internal_error', body.error?.message ?? `HTTP ${result.response.status}`,
    body.error?.source, result.response.headers.get('Request-Id'),
  );
}

interface Page<T> {
  data: T[];
  has_more: boolean;
  cursor?: string;
}

/**
 * Every item of a list: `fetchPage` gets each page from the cursor of the one before (undefined for
 * the first), e.g. `(cursor) => client.GET('/v0/customers', { params: { query: { cursor } } })`.
 */
export async function* paginate<T>(fetchPage: (cursor: string | undefined) => Promise<{ data?: Page<T>; error?: unknown; response: Response }>): AsyncGenerator<T> {
  let cursor: string | undefined;
  for (;;) {
    const page = unwrap(await fetchPage(cursor));
    yield* page.data;
    if (!page.has_more || !page.cursor) return;
    cursor = page.cursor;
  }
}
