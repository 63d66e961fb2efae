import fs from 'node:fs';
import path from 'node:path';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { workflowBundle } from '../harness';

Runtime.install({ logger: new DefaultLogger('WARN') });

// Determinism across releases: histories that an earlier release's workers recorded (exported with
// `temporal workflow show --output json`, `test/fixtures/histories/`) must replay on the current
// workflow code, since running workflows carry on under the new code after a deploy. Histories
// recorded now: replay.test.ts. (protobufjs 8 is a direct devDependency so that npm installs one copy
// for @temporalio/common, proto and worker: with a copy each, the SDK cannot read a JSON history and
// fails with "type must be a Type".)
test.each([
  // Held and decided by code from before the decision was recorded.
  ...['transfer-review-approved', 'transfer-review-rejected', 'kyc-manual-review-approved', 'kyc-manual-review-rejected']
    .map((name) => [name, 'before operator decisions were recorded', 'before-decision-record']),
  // Fiat refunds from before a settled refund was watched through the source rail's return window
  // (`watch-refund-returns`): refunded after a payout return, after a rejection in review, and after a
  // rejected refund was retried.
  ...['transfer-returned-refunded', 'transfer-rejected-in-review-refunded', 'transfer-refund-rejected-retried']
    .map((name) => [name, 'before refunds were watched for returns', 'before-refund-watch']),
  // An MPC co-signature from before a pending signing looked at its nonce (`mpc-signing-watches-nonce`).
  ['mpc-signing-completed', "before a signing watched its wallet's nonce", 'before-nonce-watch'],
])('%s by the previous release (%s) replays on the current code', async (name, _release, fileSuffix) => {
  const history = JSON.parse(fs.readFileSync(path.join(__dirname, '../fixtures/histories', `${name}-${fileSuffix}.json`), 'utf8'));
  expect(history.events.length).toBeGreaterThan(20);
  // The SDK reads the JSON form itself (the CLI's and the Web UI's export).
  await Worker.runReplayHistory(workflowBundle(), history, name);
});
