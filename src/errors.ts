// The one error type of the platform: what any layer throws when a request cannot be done, named by
// the conventions' code; the HTTP layer (src/api/app.ts) turns it into the shared envelope.

/** Every code the API answers with, as its error envelope's `code` (an enum in the OpenAPI document). */
export const ERROR_CODES = [
  'invalid_request', 'unauthorized', 'forbidden', 'not_found', 'method_not_allowed', 'invalid_state', 'idempotency_key_in_use',
  'payload_too_large', 'unsupported_media_type', 'idempotency_key_mismatch', 'rate_limited', 'daily_quota_exceeded', 'internal_error',
  'service_unavailable',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export type SourceLocation = 'body' | 'query' | 'path' | 'header';

export const STATUS: Record<ErrorCode, number> = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  invalid_state: 409,
  idempotency_key_in_use: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  idempotency_key_mismatch: 422,
  rate_limited: 429,
  daily_quota_exceeded: 429,
  internal_error: 500,
  service_unavailable: 503,
};

/** The one error type handlers throw; the error middleware turns it into the shared envelope. */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly source?: { location: SourceLocation; key: string },
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = STATUS[code];
  }

  toBody() {
    return { error: { code: this.code, message: this.message, ...(this.source ? { source: this.source } : {}) } };
  }
}

export const notFound = (what: string, id?: string) =>
  new ApiError('not_found', id ? `No such ${what}: '${id}'` : `No such ${what}`);

export const invalidState = (message: string) => new ApiError('invalid_state', message);

/** A 409: the request is well formed but the named field's object is not in a state that allows it. */
export const invalidStateField = (key: string, message: string) => new ApiError('invalid_state', message, { location: 'body', key });

export const invalidField = (location: SourceLocation, key: string, message: string) =>
  new ApiError('invalid_request', message, { location, key });
