// Jest's node environment, with one change for the whole worker process: pooled HTTP connections are
// given up after 10 s idle, long before a server of ours closes them (the API keeps them 65 s).
//
// Left to its defaults, fetch keeps a connection for the server's Keep-Alive hint less one second,
// timed at one-second granularity. A jest worker that was busy near that moment (a CPU-bound unit
// file, a spawnSync of the CLI) could send its next request just as the server closed the
// connection, and a POST then failed with "other side closed" without ever reaching the API.
//
// This module runs in the worker's own realm, not a test file's sandbox, so the dispatcher it sets is
// the one Node's fetch reads.
const os = require('node:os');
const { TestEnvironment } = require('jest-environment-node');
const { Agent, setGlobalDispatcher } = require('undici');

const IDLE_CONNECTION_MS = 10_000;
setGlobalDispatcher(new Agent({ keepAliveTimeout: IDLE_CONNECTION_MS, keepAliveMaxTimeout: IDLE_CONNECTION_MS }));

// Under the whole stack the worker yields the CPU to the services it tests (TEST_NICENESS, set by
// the global setup: see yieldToServices in ./stack.ts); the processes it starts inherit that.
const niceness = Number(process.env.TEST_NICENESS ?? 0);
if (niceness > os.getPriority()) os.setPriority(niceness);

module.exports = TestEnvironment;
