#!/usr/bin/env bash
# Runs part of the suite on Node 22 (CI runs the whole suite on the machine's Node 20 first):
# `npm start`'s embedded stack, the production API and worker processes with KYC and the API
# conventions through them, and the replay of earlier releases' workflow histories on the current
# code (the histories recorded now replay on Node 20). The same prerequisites as `npm test`.
set -euo pipefail
cd "$(dirname "$0")/.."
PATH="$(bash scripts/install-node22.sh | tail -1):$PATH"
export PATH
version="$(node --version)"
case "$version" in v22.*) ;; *) echo "test-node22: expected Node 22, got $version" >&2; exit 1 ;; esac
echo "test-node22: node $version"
exec node node_modules/jest/bin/jest.js --maxWorkers=2 \
  test/e2e/embedded-stack.test.ts test/e2e/replay-releases.test.ts test/e2e/kyc.test.ts test/e2e/conventions.test.ts "$@"
