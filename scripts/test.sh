#!/usr/bin/env bash
# README's test command (npm test): unit and e2e three files at a time against one stack, and beside
# them e2e-alone one file at a time against a stack of its own (jest.config.js says why). The
# e2e-alone run's output is kept in test-logs/e2e-alone.out and printed once both have ended, so
# that the log reads as two runs, one after the other. Fails when either fails.
set -u
cd "$(dirname "$0")/.."
mkdir -p test-logs
npx jest --runInBand --selectProjects e2e-alone "$@" > test-logs/e2e-alone.out 2>&1 &
alone=$!
npx jest --maxWorkers=3 --selectProjects unit e2e "$@"
main=$?
wait "$alone"
rest=$?
echo
echo "── e2e-alone (ran beside the run above, on a stack of its own) ──"
cat test-logs/e2e-alone.out
[ "$main" = 0 ] && [ "$rest" = 0 ]
