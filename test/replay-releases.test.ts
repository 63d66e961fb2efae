import fs from 'node:fs';
import path from 'node:path';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';

Runtime.install({ logger: new DefaultLogger('WARN') });

// Determinism across releases: histories that an earlier release's workers recorded (exported with
// `temporal workflow show --output json`) must replay on the current workflow code, since running
// workflows carry on under the new code after a deploy. Histories recorded now: replay.test.ts.

// Histories of transfers that were held and decided by code from before the decision was recorded
// (exported with `temporal workflow show --output json`): the running workflows of an earlier
// release must keep replaying on the new code. (protobufjs 8 is a direct devDependency so that npm
// installs one copy for @temporalio/common, proto and worker: with a copy each, the SDK cannot read
// a JSON history and fails with "type must be a Type".)
test.each([
  'transfer-review-approved', 'transfer-review-rejected', 'kyc-manual-review-approved', 'kyc-manual-review-rejected',
])('%s by the previous release (before operator decisions were recorded) replays on the current code', async (name) => {
  const file = path.join(__dirname, 'fixtures/histories', `${name}-before-decision-record.json`);
  const history = JSON.parse(fs.readFileSync(file, 'utf8'));
  expect(history.events.length).toBeGreaterThan(20);
  // The SDK reads the JSON form itself (the CLI's and the Web UI's export).
  await Worker.runReplayHistory({ workflowsPath: require.resolve('../workflows') }, history, name);
});

// Fiat refunds recorded by the release before a settled refund was watched through the source rail's
// return window (`watch-refund-returns`): refunded after a payout return, after a rejection in review,
// and after a rejected refund was retried.
test.each([
  'transfer-returned-refunded', 'transfer-rejected-in-review-refunded', 'transfer-refund-rejected-retried',
])('%s by the previous release (before refunds were watched for returns) replays on the current code', async (name) => {
  const history = JSON.parse(fs.readFileSync(path.join(__dirname, 'fixtures/histories', `${name}-before-refund-watch.json`), 'utf8'));
  expect(history.events.length).toBeGreaterThan(20);
  await Worker.runReplayHistory({ workflowsPath: require.resolve('../workflows') }, history, name);
});
