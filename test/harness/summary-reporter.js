const fs = require('node:fs');
const path = require('node:path');

// Prints one plain closing line that any CI log reader understands: "tests: N passed, N failed",
// after the slowest tests and test files of the run (where CI's time goes).
class SummaryReporter {
  constructor() {
    this.durations = [];
    this.files = [];
  }

  onTestResult(_test, result) {
    const file = result.testFilePath.split('/test/').pop();
    this.files.push({ ms: result.perfStats.end - result.perfStats.start, name: file });
    for (const t of result.testResults) this.durations.push({ ms: t.duration ?? 0, name: `${file}: ${t.title}` });
  }

  onRunComplete(_contexts, results) {
    const slowest = this.durations.sort((a, b) => b.ms - a.ms).slice(0, 12);
    if (slowest.length > 1) {
      process.stdout.write(`\nslowest tests:\n${slowest.map((t) => `  ${(t.ms / 1000).toFixed(1)} s  ${t.name.slice(0, 150)}`).join('\n')}\n`);
      const files = this.files.sort((a, b) => b.ms - a.ms).slice(0, 12);
      process.stdout.write(`\nslowest files:\n${files.map((f) => `  ${(f.ms / 1000).toFixed(1)} s  ${f.name}`).join('\n')}\n`);
    }
    if (results.numFailedTests + results.numRuntimeErrorTestSuites > 0) printServerErrors();
    const skipped = results.numPendingTests + results.numTodoTests;
    const suiteErrors = results.numRuntimeErrorTestSuites;
    process.stdout.write(
      `\ntests: ${results.numPassedTests} passed, ${results.numFailedTests + suiteErrors} failed${skipped ? `, ${skipped} skipped` : ''}\n`,
    );
  }
}
/**
 * A failed run's CI log shows the test's side only; a 500 or a stalled workflow is explained by the
 * stack's own error lines (test-logs/api.log and worker.log: JSON, without secrets or PII). The last
 * few of each are printed with the summary.
 */
function printServerErrors() {
  for (const name of ['api', 'worker']) {
    let lines;
    try {
      lines = fs.readFileSync(path.join(stackLogDir(), `${name}.log`), 'utf8').split('\n');
    } catch {
      continue;
    }
    const errors = lines.filter((l) => /"level":(50|60)/.test(l)).slice(-15);
    if (errors.length > 0) process.stdout.write(`\nthe stack's ${name} logged, last ${errors.length} errors:\n${errors.map((l) => `  ${l.slice(0, 600)}`).join('\n')}\n`);
  }
}

/** The logs of the stack this run started (global setup publishes it), or the suite's default folder. */
function stackLogDir() {
  try {
    return JSON.parse(process.env.FP_TEST_STACK).logDir;
  } catch {
    return path.join(__dirname, '../../test-logs');
  }
}

module.exports = SummaryReporter;
