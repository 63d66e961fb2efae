// Prints one plain closing line that any CI log reader understands: "tests: N passed, N failed".
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    const suiteErrors = results.numRuntimeErrorTestSuites;
    process.stdout.write(
      `\ntests: ${results.numPassedTests} passed, ${results.numFailedTests + suiteErrors} failed${skipped ? `, ${skipped} skipped` : ''}\n`,
    );
  }
}
module.exports = SummaryReporter;
