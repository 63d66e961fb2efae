import { z } from 'zod';
import { listParams, listSchema, paginate } from '../../api/pagination';
import { defineRoute } from '../../api/route';
import { ASSET_SCALE, formatAmount } from '../../domain/money';
import { notFound } from '../../errors';
import { objectId } from '../../ids';
import { ReconciliationReportSchema, reportJson, type DayReport } from '../../reconciliation/daily';
import { exceptionCurrency, exceptionsQuery, exceptionWithResolutions, resolveException } from '../../reconciliation/exceptions';
import { storedLine } from '../../reconciliation/matching';

// The reconciliation's exceptions for the platform's operators (docs/RECONCILIATION.md): what the
// bank's statement and the books disagree on, and what an operator did about each. Operator keys
// only; every other key gets a 404, as for a route that does not exist.

const LineSchema = z.object({
  direction: z.enum(['credit', 'debit']),
  amount: z.string().describe('Decimal, in the exception currency'),
  date: z.string().describe('YYYY-MM-DD'),
  references: z.array(z.string()).describe("A chain's lines: the transaction hash first (and the payout's id, on the books' side)"),
  counterparty: z.string().describe("A chain's lines: the payee's address"),
}).meta({ id: 'ReconciliationLine' });

const ResolutionSchema = z.object({
  id: objectId('rres'),
  action: z.enum(['match', 'write_off', 'investigate']),
  operator: z.string().describe('Who: the operator key, or the name given to the CLI'),
  reason: z.string(),
  counterpart_exception_id: z.string().nullable(),
  ledger_transaction_id: z.string().nullable().describe('The movement a write-off posted to the suspense account'),
  request_id: z.string().nullable(),
  created_at: z.iso.datetime(),
}).meta({ id: 'ReconciliationResolution' });

const ExceptionSchema = z.object({
  id: objectId('rexc'),
  object: z.literal('reconciliation_exception'),
  type: z.enum(['missing_from_statement', 'unexpected_on_statement', 'amount_mismatch', 'balance_difference', 'transaction_not_found', 'payee_not_paid', 'movement_claimed_twice'])
    .describe("A bank account's: missing_from_statement, unexpected_on_statement, amount_mismatch, balance_difference (the closing balance less the books and what they explain); a chain's payout: transaction_not_found, payee_not_paid, movement_claimed_twice"),
  status: z.enum(['open', 'investigating', 'resolved']),
  account: z.string().describe("The bank account's number as its statement names it, the chain's name (its payouts), or `<chain>:<currency>` (its treasury's holdings)"),
  rail: z.string(),
  currency: z.string(),
  amount: z.string().describe('The amount in question: the line, or the difference of an amount mismatch'),
  statement_line: LineSchema.nullable().describe("What the bank's statement (or the chain's node) shows; null when it shows nothing"),
  books_line: LineSchema.nullable().describe('What the books expected the statement to show; null when they expected nothing'),
  age_seconds: z.number().int().describe('Since the run that opened it'),
  run_id: objectId('rrun'),
  resolution: z.enum(['matched', 'written_off']).nullable(),
  reason: z.string().nullable(),
  resolved_by: z.string().nullable(),
  resolved_at: z.iso.datetime().nullable(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
  resolutions: z.array(ResolutionSchema).optional().describe('Every action taken on it, oldest first (when retrieved one at a time)'),
}).meta({ id: 'ReconciliationException' });

type ExceptionRow = NonNullable<Awaited<ReturnType<typeof exceptionWithResolutions>>>;

function lineOf(json: unknown, scale: number) {
  const l = storedLine(json);
  return l && { direction: l.direction, amount: formatAmount(l.amountMinor, scale), date: l.date, references: l.references, counterparty: l.counterparty };
}

function serializeException(row: Omit<ExceptionRow, 'resolutions'> & { resolutions?: ExceptionRow['resolutions'] }, now = Date.now()) {
  const currency = exceptionCurrency(row);
  const scale = ASSET_SCALE[currency] ?? 2;
  return {
    id: row.id, object: 'reconciliation_exception' as const, type: row.type as 'amount_mismatch', status: row.status,
    account: row.account, rail: row.rail, currency, amount: formatAmount(BigInt(row.amount_minor), scale),
    statement_line: lineOf(row.statement_line, scale), books_line: lineOf(row.expected_line, scale),
    age_seconds: Math.max(0, Math.floor((now - row.created_at.getTime()) / 1000)), run_id: row.run_id,
    resolution: row.resolution as 'matched' | null, reason: row.reason, resolved_by: row.resolved_by,
    resolved_at: row.resolved_at?.toISOString() ?? null, created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString(),
    ...(row.resolutions ? {
      resolutions: row.resolutions.map((r) => ({
        id: r.id, action: r.action, operator: r.operator, reason: r.reason, counterpart_exception_id: r.counterpart_exception_id,
        ledger_transaction_id: r.ledger_transaction_id, request_id: r.request_id, created_at: r.created_at.toISOString(),
      })),
    } : {}),
  };
}

export const listReconciliationExceptions = defineRoute({
  method: 'get',
  path: '/v0/reconciliation/exceptions',
  summary: 'List reconciliation exceptions, newest first (operator keys)',
  tag: 'Reconciliation',
  permission: 'unrestricted',
  operator: true,
  query: z.strictObject({
    ...listParams,
    status: z.enum(['open', 'investigating', 'resolved']).optional(),
    type: ExceptionSchema.shape.type.optional(),
    account: z.string().max(34).optional(),
  }),
  responses: { 200: listSchema(ExceptionSchema, 'ReconciliationException') },
  handler: async ({ deps, auth, query }) =>
    ({ status: 200, body: await paginate(exceptionsQuery(deps.db, auth.environment, query), query, (row) => serializeException(row)) }),
});

export const getReconciliationException = defineRoute({
  method: 'get',
  path: '/v0/reconciliation/exceptions/{exception_id}',
  summary: 'Retrieve a reconciliation exception, with the actions taken on it (operator keys)',
  tag: 'Reconciliation',
  permission: 'unrestricted',
  operator: true,
  params: z.strictObject({ exception_id: z.string() }),
  responses: { 200: ExceptionSchema },
  handler: async ({ deps, auth, params }) => {
    const row = await exceptionWithResolutions(deps.db, auth.environment, params.exception_id);
    if (!row) throw notFound('reconciliation exception', params.exception_id);
    return { status: 200, body: serializeException(row) };
  },
});

export const resolveReconciliationException = defineRoute({
  method: 'post',
  path: '/v0/reconciliation/exceptions/{exception_id}/resolve',
  summary: 'Resolve a reconciliation exception: match it by hand, write it off to suspense, or investigate (operator keys)',
  tag: 'Reconciliation',
  permission: 'unrestricted',
  operator: true,
  params: z.strictObject({ exception_id: z.string() }),
  body: z.strictObject({
    action: z.enum(['match', 'write_off', 'investigate']).describe(
      'match: the difference is explained (with counterpart_exception_id: the same money on the other side, both close); '
      + 'write_off: the ledger moves the difference to the suspense account; investigate: it stays listed, marked as under investigation',
    ),
    reason: z.string().min(3).max(500),
    counterpart_exception_id: objectId('rexc').optional(),
  }),
  responses: { 200: ExceptionSchema },
  handler: async ({ auth, params, body, write, requestId }) =>
    write(async (trx) => {
      const row = await resolveException(trx, {
        environment: auth.environment, exceptionId: params.exception_id, action: body.action, reason: body.reason,
        operator: auth.keyId, counterpartId: body.counterpart_exception_id, requestId,
      });
      return { status: 200, body: serializeException(row) };
    }),
});

const reportOf = (row: { report: Record<string, unknown> }) => reportJson(row.report as unknown as DayReport);

export const listReconciliationReports = defineRoute({
  method: 'get',
  path: '/v0/reconciliation/reports',
  summary: "List the daily reconciliation's reports, newest first (operator keys)",
  tag: 'Reconciliation',
  permission: 'unrestricted',
  operator: true,
  query: z.strictObject({ ...listParams }),
  responses: { 200: listSchema(ReconciliationReportSchema, 'ReconciliationReport') },
  handler: async ({ deps, auth, query }) => ({
    status: 200,
    body: await paginate(deps.db.selectFrom('reconciliation_days').select(['id', 'created_at', 'report']).where('environment', '=', auth.environment), query, reportOf),
  }),
});

export const getReconciliationReport = defineRoute({
  method: 'get',
  path: '/v0/reconciliation/reports/{report_id}',
  summary: "Retrieve a daily reconciliation's report: per account the statements read, matches, exceptions and a missing statement (operator keys)",
  tag: 'Reconciliation',
  permission: 'unrestricted',
  operator: true,
  params: z.strictObject({ report_id: z.string() }),
  responses: { 200: ReconciliationReportSchema },
  handler: async ({ deps, auth, params }) => {
    const row = await deps.db.selectFrom('reconciliation_days').select('report').where('id', '=', params.report_id).where('environment', '=', auth.environment).executeTakeFirst();
    if (!row) throw notFound('reconciliation report', params.report_id);
    return { status: 200, body: reportOf(row) };
  },
});

export const reconciliationRoutes = [
  listReconciliationExceptions, getReconciliationException, resolveReconciliationException, listReconciliationReports, getReconciliationReport,
];
