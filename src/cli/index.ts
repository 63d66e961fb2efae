// Admin CLI: `npm run cli -- <command>`. Talks to DATABASE_URL (or the embedded database of `npm start`,
// which must be running) and, for KYC decisions, to Temporal.
import { parseArgs } from 'node:util';
import { createApiKey, createDeveloper, revokeApiKey, setAllowedOrigins } from '../admin/accounts';
import { rotateDataKey } from '../admin/data-key-rotation';
import { matchUnmatchedDeposit, railEventsNeedingOperators, resolveRailEvent } from '../admin/rail-events';
import { ASSET_SCALE, formatAmount } from '../domain/money';
import { releaseHeldStrayDeposit } from '../admin/stray-deposits';
import { heldDepositReturns } from '../payments/store';
import { createKeyVault } from '../keys/key-vault';
import { rewrapWalletKeys } from '../admin/wallet-key-rewrap';
import { stuckWorkflows } from '../admin/stuck-workflows';
import { listBankFiles, resendBankFile, showBankFile } from '../admin/bank-files';
import { reconciliationCommand } from '../admin/reconciliation';
import { createChainAdapters } from '../chains';
import { createDataCipher } from '../crypto';
import type { Permission } from '../api/context';
import { loadConfig } from '../config';
import { createDb, migrateToLatest } from '../db';
import { connectTemporalClient } from '../temporal/client';
import { setUpNamespace } from '../temporal/namespace-setup';
import { decideKyc } from '../kyc/workflow-client';
import { reactivateCustomer, suspendCustomer } from '../customers/suspension';
import { submitRefundRetry, submitReviewDecision } from '../transfers/workflow-client';
import { loadTransfer } from '../transfers/transfer';
import { resolveRefundDestination } from '../transfers/service';
import { SOURCES } from '../sanctions/sources';
import { syncLists } from '../sanctions/sync';
import { verifyLedger } from '../ledger/ledger';
import { sql } from 'kysely';
import { USAGE } from './usage';

function databaseUrl(config: ReturnType<typeof loadConfig>) {
  return config.DATABASE_URL ?? `postgres://postgres@127.0.0.1:${config.PGLITE_PORT}/postgres`;
}

/** Operator commands that talk to a workflow: one Temporal connection, closed when done. */
async function withTemporal<T>(config: ReturnType<typeof loadConfig>, fn: (temporal: Awaited<ReturnType<typeof connectTemporalClient>>) => Promise<T>) {
  // Against `npm start`'s stack (no DATABASE_URL), the key it keeps in DATA_DIR.
  const cipher = createDataCipher(config, { allowGenerated: !config.DATABASE_URL });
  const temporal = await connectTemporalClient(config, config.TEMPORAL_ADDRESS ?? `127.0.0.1:${config.TEMPORAL_PORT}`, cipher);
  try {
    return await fn(temporal);
  } finally {
    await temporal.connection.close();
  }
}

async function main(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      developer: { type: 'string' },
      environment: { type: 'string' },
      kind: { type: 'string' },
      permissions: { type: 'string' },
      plan: { type: 'string' },
      'rate-limit': { type: 'string' },
      'daily-quota': { type: 'string' },
      decision: { type: 'string' },
      reason: { type: 'string', multiple: true },
      operator: { type: 'string' },
      note: { type: 'string' },
      'to-address': { type: 'string' },
      'external-account': { type: 'string' },
      transfer: { type: 'string' },
      source: { type: 'string', multiple: true },
      origin: { type: 'string', multiple: true },
      default: { type: 'boolean' },
      operators: { type: 'boolean' },
      counterpart: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [group, action, target] = positionals;
  if (values.help || !group) {
    console.log(USAGE);
    return;
  }
  const config = loadConfig();
  const db = createDb(databaseUrl(config), 2);
  // Who takes a KYC or transfer review decision, for the audit record.
  const operator = values.operator ?? process.env.USER ?? 'operator';
  try {
    if (group === 'migrate') {
      await migrateToLatest(db);
      console.log('migrations applied');
    } else if (group === 'temporal' && action === 'setup') {
      if (!config.TEMPORAL_ADDRESS) throw new Error('TEMPORAL_ADDRESS is required');
      await setUpNamespace(config.TEMPORAL_ADDRESS, config.TEMPORAL_NAMESPACE, { waitMs: 120_000 });
      console.log(`namespace ${config.TEMPORAL_NAMESPACE} and its search attributes are set up on ${config.TEMPORAL_ADDRESS}`);
    } else if (group === 'developers' && action === 'create') {
      if (!values.name) throw new Error('--name is required');
      const dev = await createDeveloper(db, {
        name: values.name,
        rateLimitPerSecond: values['rate-limit'] ? Number(values['rate-limit']) : undefined,
        dailyQuota: values['daily-quota'] ? Number(values['daily-quota']) : undefined,
        operators: values.operators,
      });
      console.log(dev.id);
    } else if (group === 'developers' && action === 'allow-origins') {
      if (!target) throw new Error('developers allow-origins needs a developer id (dev_…)');
      if (!values.default === !values.origin?.length) throw new Error('give --origin (one or more) or --default');
      await setAllowedOrigins(db, target, values.default ? null : values.origin!);
      console.log(values.default ? `${target}: default origins` : `${target}: ${values.origin!.join(', ')}`);
    } else if (group === 'keys' && action === 'create') {
      if (!values.developer) throw new Error('--developer is required');
      if (values.environment !== 'sandbox' && values.environment !== 'production') throw new Error('--environment must be sandbox or production');
      if (values.kind !== 'secret' && values.kind !== 'publishable') throw new Error('--kind must be secret or publishable');
      if (values.plan && !['sandbox', 'production', 'enterprise'].includes(values.plan)) throw new Error('--plan must be sandbox, production or enterprise');
      const created = await createApiKey(db, {
        developerId: values.developer,
        environment: values.environment,
        kind: values.kind,
        permissions: values.permissions ? (values.permissions.split(',').map((p) => p.trim()) as Permission[]) : undefined,
        plan: values.plan as 'sandbox' | 'production' | 'enterprise' | undefined,
      });
      console.log(`key id: ${created.id} (${created.kind}, ${created.environment}, plan ${created.plan})`);
      console.log('The key is shown once; store it now:');
      console.log(created.key);
    } else if (group === 'keys' && action === 'revoke') {
      if (!target) throw new Error('keys revoke needs a key id (key_…)');
      await revokeApiKey(db, target);
      console.log(`revoked ${target}`);
    } else if (group === 'kyc' && action === 'decide') {
      if (!target) throw new Error('kyc decide needs a customer id (cus_…)');
      const decision = values.decision;
      if (decision !== 'approve' && decision !== 'reject') throw new Error('--decision must be approve or reject');
      const state = await withTemporal(config, (temporal) => decideKyc({ temporal, config }, target, {
        decision, reasons: values.reason, operator,
      }));
      console.log(`${target}: kyc_status ${state.kyc_status}`);
    } else if (group === 'customers' && action === 'suspend') {
      if (!target) throw new Error('customers suspend needs a customer id (cus_…)');
      if (!values.reason?.length) throw new Error('--reason is required: it is shown on the customer and on the transfers it holds');
      const row = await suspendCustomer(db, null, target, { reason: values.reason.join('; '), operator });
      console.log(`${target}: suspended (${row.suspension?.reason}) by ${operator}`);
    } else if (group === 'customers' && action === 'reactivate') {
      if (!target) throw new Error('customers reactivate needs a customer id (cus_…)');
      const row = await reactivateCustomer(db, null, target);
      console.log(`${target}: ${row.status} again (reactivated by ${operator})`);
    } else if (group === 'transfers' && action === 'review') {
      if (!target) throw new Error('transfers review needs a transfer id (tr_…)');
      if (values.decision !== 'approve' && values.decision !== 'reject') throw new Error('--decision must be approve or reject');
      const status = await withTemporal(config, (temporal) => submitReviewDecision({ temporal, config }, target, {
        approve: values.decision === 'approve', note: values.note, operator,
      }));
      console.log(`${target}: ${status.state} (${status.step})`);
    } else if (group === 'transfers' && action === 'retry-refund') {
      if (!target) throw new Error('transfers retry-refund needs a transfer id (tr_…)');
      const row = await loadTransfer(db, target).catch(() => { throw new Error(`No such transfer: ${target}`); });
      const destination = await resolveRefundDestination(db, { developerId: row.developer_id, environment: row.environment }, row, {
        to_address: values['to-address'], external_account_id: values['external-account'],
      });
      const status = await withTemporal(config, (temporal) => submitRefundRetry({ temporal, config }, target, { operator, destination }));
      console.log(`${target}: ${status.state} (${status.step})`);
    } else if (group === 'payments' && action === 'held') {
      const held = await heldDepositReturns(db);
      for (const p of held) {
        const amount = `${formatAmount(BigInt(p.amount_minor), ASSET_SCALE[p.currency] ?? 2)} ${p.currency}`;
        console.log([p.id, p.updated_at.toISOString(), `${p.developer_id}/${p.environment}`, p.transfer_id, p.rail, amount, p.to_address ?? '-', p.failure_reason].join('  '));
      }
      console.log(`${held.length} held stray-deposit return(s)`);
    } else if (group === 'payments' && action === 'release') {
      if (!target) throw new Error('payments release needs a payment id (pay_…)');
      const chains = createChainAdapters(config, db);
      const released = await withTemporal(config, (temporal) => releaseHeldStrayDeposit({ db, temporal, taskQueue: config.TEMPORAL_TASK_QUEUE, chains }, {
        paymentId: target, operator, note: values.note, toAddress: values['to-address'],
      }));
      const to = released.toAddress ?? 'the account it came from';
      console.log(`${target}: released by ${operator}, returning to ${to} (workflow ${released.workflowId})`);
    } else if (group === 'data' && action === 'rotate-key') {
      const cipher = createDataCipher(config, { allowGenerated: false });
      console.log(`re-encrypting under key ${cipher.currentKeyId}`);
      await rotateDataKey(db, cipher, (line) => console.log(line));
      console.log('done: every encrypted value and fingerprint is under the current key; DATA_ENCRYPTION_PREVIOUS_KEYS can be emptied');
    } else if (group === 'keys' && action === 'rewrap') {
      const vault = createKeyVault(config, { allowGenerated: false });
      console.log(`sealing wallet keys under ${vault.currentKekId}`);
      const moved = await rewrapWalletKeys(db, vault, (line) => console.log(line));
      console.log(`done: ${moved} moved; every wallet key is under the current KEK; WALLET_KEK_PREVIOUS and WALLET_KMS_KEY_IDS_PREVIOUS can be emptied`);
    } else if (group === 'rail-events' && action === 'list') {
      const events = await railEventsNeedingOperators(db);
      for (const e of events) {
        console.log([e.id, e.received_at.toISOString(), e.type, e.outcome ?? 'not handled', e.transfer_id ?? '-', e.provider_payment_id, JSON.stringify(e.payload)].join('  '));
      }
      console.log(`${events.length} rail event(s) need an operator`);
    } else if (group === 'rail-events' && action === 'match') {
      if (!target) throw new Error('rail-events match needs an event id');
      if (!values.transfer) throw new Error('rail-events match needs --transfer (the transfer the money was meant for)');
      const transferId = values.transfer;
      const outcome = await withTemporal(config, (temporal) => matchUnmatchedDeposit({ db, temporal, config }, {
        id: target, transferId, operator, note: values.note,
      }));
      console.log(`${target}: matched to ${transferId} by ${operator}: ${outcome}`);
    } else if (group === 'rail-events' && action === 'resolve') {
      if (!target) throw new Error('rail-events resolve needs an event id');
      if (!values.note) throw new Error('rail-events resolve needs --note (how it was dealt with)');
      await resolveRailEvent(db, { id: target, operator, note: values.note });
      console.log(`${target}: resolved by ${operator}`);
    } else if (group === 'bank-files' && action === 'list') {
      for (const line of await listBankFiles(db)) console.log(line);
    } else if (group === 'bank-files' && (action === 'show' || action === 'resend')) {
      if (!target) throw new Error(`bank-files ${action} needs a file id (bfile_…)`);
      if (action === 'show') for (const line of await showBankFile(db, target)) console.log(line);
      else console.log(`${target}: resending (workflow ${await withTemporal(config, (temporal) => resendBankFile({ db, temporal, taskQueue: config.TEMPORAL_TASK_QUEUE }, target))})`);
    } else if (group === 'reconciliation') {
      for (const line of await reconciliationCommand(db, config, { action, target, operator, decision: values.decision, reason: values.reason?.join('; '), counterpart: values.counterpart })) console.log(line);
    } else if (group === 'workflows' && action === 'stuck') {
      const stuck = await withTemporal(config, (temporal) => stuckWorkflows(temporal));
      for (const w of stuck) {
        console.log([w.workflowId, w.type, `started ${w.startedAt.toISOString()}`, `retrying: ${w.stuckActivities.join(', ')}`].join('  '));
        for (const a of w.pending) console.log(`    ${a.activityType}: attempt ${a.attempt}${a.lastFailure ? `, last failure: ${a.lastFailure}` : ''}`);
      }
      console.log(`${stuck.length} workflow(s) with an activity retried past its alarm threshold`);
    } else if (group === 'ledger' && action === 'verify') {
      const result = await verifyLedger(db);
      console.log(`${result.transactions} transactions, ${result.entries} entries, ${result.accounts} accounts`);
      for (const p of result.problems) console.log(`PROBLEM: ${p}`);
      if (!result.ok) throw new Error(`ledger verification failed: ${result.problems.length} problem(s)`);
      console.log('ledger verified: every transaction and currency sums to zero; cached balances match their entries');
    } else if (group === 'lists' && action === 'sources') {
      for (const src of SOURCES) console.log(`${src.id.padEnd(24)} ${src.region.padEnd(16)} ${src.format.padEnd(16)} ${src.name}`);
    } else if (group === 'lists' && action === 'sync') {
      const result = await syncLists({ dir: config.sanctionsDataDir, sources: values.source, onProgress: (line) => console.log(line) });
      // Running API and worker processes reload on this notification.
      if (result.synced.length > 0) await sql`notify sanctions_lists_updated`.execute(db);
      console.log(`${result.synced.length} of ${result.synced.length + result.failed.length} sources synced into ${config.sanctionsDataDir}`);
      if (result.failed.length > 0) {
        throw new Error(
          result.synced.length === 0
            ? 'no list could be downloaded: is this machine offline? Lists already on disk are kept.'
            : `${result.failed.length} source(s) failed; their previous files are kept`,
        );
      }
    } else {
      throw new Error(`unknown command '${positionals.join(' ')}'\n${USAGE}`);
    }
  } finally {
    await db.destroy();
  }
}

main(process.argv.slice(2)).catch((err) => {
  console.error(`error: ${err?.message ?? err}`);
  process.exit(1);
});
