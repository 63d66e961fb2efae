import { ApplicationFailure } from '@temporalio/activity';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { DatabaseError } from 'pg';
import { ZodError } from 'zod';
import { PayoutRejectedError } from '../src/chains/chain-adapter';
import { MpcProtocolError } from '../src/mpc/dkls23';
import { RailUnavailableError } from '../src/providers/rails';
import { FAILURE } from '../src/temporal/failures';

// The one place where what goes wrong in an activity becomes a Temporal failure (a type the
// workflows and retry policies name, retryable or not). Activities throw the core's own errors.

/**
 * PostgreSQL error classes that no retry can mend: 22 (data exception: a NUL byte, a lone surrogate
 * in JSON, a number out of range) and 23 (integrity constraint violation). A unique violation (23505)
 * is the exception: it is how two attempts of the same idempotent activity meet, and the next
 * attempt finds the row the other one wrote.
 */
function isPermanentDatabaseError(err: unknown): err is DatabaseError & { code: string } {
  return err instanceof DatabaseError && /^2[23][0-9A-Z]{3}$/.test(err.code ?? '') && err.code !== '23505';
}

/**
 * What an activity's failure becomes:
 * - data that can never be stored or used (a permanent PostgreSQL error, a zod refusal, an MPC
 *   message the protocol refuses): non-retryable `InvalidData`, named by its code and the schema
 *   objects involved, never by the data (workflow histories keep failure messages);
 * - the chain's refusal of a payment: non-retryable `PayoutRejected` (an answer, not an outage);
 * - the rail provider not taking a call: retryable `RailUnavailable`;
 * - anything else is left to the activity's retry policy as it is.
 */
export function classifyActivityFailure(err: unknown): unknown {
  if (err instanceof PayoutRejectedError) return ApplicationFailure.create({ type: FAILURE.PayoutRejected, message: err.message, nonRetryable: true });
  if (err instanceof RailUnavailableError) return ApplicationFailure.create({ type: FAILURE.RailUnavailable, message: err.message, nonRetryable: false });
  if (err instanceof MpcProtocolError) return ApplicationFailure.create({ type: FAILURE.InvalidData, message: err.message, nonRetryable: true });
  if (isPermanentDatabaseError(err)) {
    const where = [err.table && `table ${err.table}`, err.column && `column ${err.column}`, err.constraint && `constraint ${err.constraint}`].filter(Boolean);
    return ApplicationFailure.create({
      type: FAILURE.InvalidData,
      message: `PostgreSQL refused the data (SQLSTATE ${err.code}${where.length ? `, ${where.join(', ')}` : ''})`,
      nonRetryable: true,
    });
  }
  if (err instanceof ZodError) {
    const issue = err.issues[0];
    return ApplicationFailure.create({ type: FAILURE.InvalidData, message: `invalid input at '${issue?.path.join('.')}': ${issue?.message}`, nonRetryable: true });
  }
  return err;
}

/** Every activity (and local activity) of the worker fails this way. */
export const classifyActivityFailures: ActivityInterceptorsFactory = () => ({
  inbound: {
    async execute(input, next) {
      try {
        return await next(input);
      } catch (err) {
        throw classifyActivityFailure(err);
      }
    },
  },
});
