#!/usr/bin/env bash
# Runs before `npm test`: makes sure what the suite drives for real is on the machine.
#   - the pinned Temporal CLI (dev server), built once into a cache outside the clone
#   - local-kms, an AWS KMS-compatible server for the KMS key vault's tests, built the same way
#   - the Temporal server, its SQL tool and the UI server for the production layout's smoke test
#     (test/e2e/cluster.test.ts), built the same way (5 to 10 minutes the first time)
#   - Chromium for the hosted KYC page test (Debian's package; installed when running as root)
#   - btcd, the Bitcoin full node the sandbox runs in regtest, built the same way
#   - moov-io/ach, which every NACHA file of the suite must pass and which writes the test bank's answers (test/tools/moov-ach), built the same way
#   - moov-io/bai2, which reads every BAI2 statement the sandbox bank writes (test/tools/moov-bai2), built the same way
#   - OpenSSH's sshd for the bank's SFTP server in the bank-file tests (Debian's openssh-server, likewise)
#   - PostgreSQL and Redis answering on 127.0.0.1 (TEST_DATABASE_ADMIN_URL / TEST_REDIS_URL to change),
#     PostgreSQL with pg_stat_statements preloaded (test/e2e/transfer-work-counts.test.ts counts the
#     statements a transfer runs) and room for 400 connections; the server restarts once for them
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-temporal-cli.sh >/dev/null
bash scripts/install-local-kms.sh >/dev/null
bash scripts/install-temporal-server.sh >/dev/null
bash scripts/install-sftp-server.sh >/dev/null
bash scripts/install-btcd.sh >/dev/null
bash scripts/install-test-tool.sh moov-ach >/dev/null
bash scripts/install-test-tool.sh moov-bai2 >/dev/null

if [ -z "${CHROMIUM_PATH:-}" ] && ! [ -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "test-prerequisites: installing chromium (Debian package)…" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "test-prerequisites: Chromium not found: install Debian's chromium or set CHROMIUM_PATH" >&2
    exit 1
  fi
fi

if command -v pg_isready >/dev/null && ! pg_isready -q -h 127.0.0.1 -p 5432; then
  if command -v pg_ctlcluster >/dev/null; then
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start || true
  fi
  for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
fi

pg_admin_url="${TEST_DATABASE_ADMIN_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
# The suite's stacks, its own processes and the cluster test's Temporal server on PostgreSQL hold
# more than the default 100 connections at once on a slow machine ("too many clients already").
pg_connections_wanted=400
if command -v psql >/dev/null; then
  preloaded="$(psql "$pg_admin_url" -Atc 'show shared_preload_libraries')"
  connections="$(psql "$pg_admin_url" -Atc 'show max_connections')"
  if ! grep -q pg_stat_statements <<<"$preloaded" || [ "$connections" -lt "$pg_connections_wanted" ]; then
    if command -v pg_ctlcluster >/dev/null; then
      echo "test-prerequisites: PostgreSQL with pg_stat_statements preloaded and $pg_connections_wanted connections (one restart)…" >&2
      grep -q pg_stat_statements <<<"$preloaded" || psql "$pg_admin_url" -qc "alter system set shared_preload_libraries = '${preloaded:+$preloaded,}pg_stat_statements'"
      [ "$connections" -ge "$pg_connections_wanted" ] || psql "$pg_admin_url" -qc "alter system set max_connections = $pg_connections_wanted"
      pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main restart
      for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
    else
      echo "test-prerequisites: PostgreSQL needs pg_stat_statements in shared_preload_libraries and max_connections >= $pg_connections_wanted: set them and restart it" >&2
      exit 1
    fi
  fi
fi

if command -v redis-cli >/dev/null && ! redis-cli -h 127.0.0.1 ping >/dev/null 2>&1; then
  if command -v redis-server >/dev/null; then
    redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no >/dev/null
  fi
  for _ in $(seq 1 10); do redis-cli -h 127.0.0.1 ping >/dev/null 2>&1 && break; sleep 1; done
fi
