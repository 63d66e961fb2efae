// Preloaded into the worker's workflow thread when WORKFLOW_STACK_TRACES is off (workers/create-worker.ts):
// the Temporal SDK's request for a V8 promise hook (to capture a stack for every promise workflow
// code creates) is refused, and the SDK runs workflows without stack traces, as it does on runtimes
// without such hooks. Node's own requests (async_hooks, AsyncLocalStorage) go through.
const { isMainThread } = require('node:worker_threads');
const { promiseHooks } = require('node:v8');

const SDK_STACK_TRACE_HOOK = /@temporalio[\\/]worker[\\/](lib|src)[\\/]workflow[\\/]vm-shared\.[jt]s/;

if (!isMainThread) {
  // The SDK says, on the console, that it runs without stack traces: what was asked for, so not said.
  const warn = console.warn;
  console.warn = function warnUnlessStackTracesOff(...args) {
    if (typeof args[0] === 'string' && args[0].startsWith('v8.promiseHooks.createHook is not available')) return;
    return warn.apply(this, args);
  };
  const createHook = promiseHooks.createHook;
  promiseHooks.createHook = function createHookUnlessForStackTraces(hooks) {
    if (SDK_STACK_TRACE_HOOK.test(new Error().stack ?? '')) throw new Error('workflow stack traces are off (WORKFLOW_STACK_TRACES)');
    return createHook.call(this, hooks);
  };
}
