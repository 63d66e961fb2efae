/** gRPC codes of a server that cannot answer now: DEADLINE_EXCEEDED (4), RESOURCE_EXHAUSTED (8), UNAVAILABLE (14). */
const GRPC_UNAVAILABLE = [4, 8, 14];

/** True for errors that mean PostgreSQL, Temporal or Redis cannot be reached right now. */
export function isDependencyDown(err: unknown): boolean {
  const e = err as { code?: string | number; name?: string; message?: string; cause?: unknown };
  if (!e) return false;
  // A chain node that is not configured or does not answer (viem's HTTP errors).
  if (e.name === 'ChainUnavailableError' || e.name === 'HttpRequestError' || e.name === 'TimeoutError') return true;
  const pgConnectionCodes = ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', '57P01', '57P02', '57P03', '53300'];
  if (typeof e.code === 'string' && (pgConnectionCodes.includes(e.code) || e.code.startsWith('08'))) return true;
  if (e.message && /Connection terminated|connect ECONNREFUSED|timeout exceeded when trying to connect/i.test(e.message)) {
    return true;
  }
  // Temporal client: gRPC UNAVAILABLE, DEADLINE_EXCEEDED and RESOURCE_EXHAUSTED (an overloaded
  // server), or a connection error.
  if (e.name === 'ServiceError' || e.name === 'ConnectionError') {
    const grpc = (e.cause as { code?: number } | undefined)?.code;
    return grpc === undefined || GRPC_UNAVAILABLE.includes(grpc);
  }
  if (typeof e.code === 'number' && GRPC_UNAVAILABLE.includes(e.code)) return true;
  return e.cause ? isDependencyDown(e.cause) : false;
}
