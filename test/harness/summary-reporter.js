// Prints one plain closing line that any CI log reader understands: "tests: N passed, N failed",
// after the slowest tests of the run (where CI's time goes).
class SummaryReporter {
  constructor() {
    this.durations = [];
  }

  onTestResult(_test, result) {
    const file = result.testFilePath.split('/test/').pop();
    for (const t of result.testResults) this.durations.push({ ms: t.duration ?? 0, name: `${file}: ${t.title}` });
  }

  onRunComplete(_contexts, results) {
    const slowest = this.durations.sort((a, b) => b.ms - a.ms).slice(0, 12);
    if (slowest.length > 1) {
      process.stdout.write(`\nslowest tests:\n${slowest.map((t) => `  ${(t.ms / 1000).toFixed(1)} s  ${t.name.slice(0, 150)}`).join('\n')}\n`);
    }
    const skipped = results.numPendingTests + results.numTodoTests;
    const suiteErrors = results.numRuntimeErrorTestSuites;
    process.stdout.write(
      `\ntests: ${results.numPassedTests} passed, ${results.numFailedTests + suiteErrors} failed${skipped ? `, ${skipped} skipped` : ''}\n`,
    );
  }
}
module.exports = SummaryReporter;
