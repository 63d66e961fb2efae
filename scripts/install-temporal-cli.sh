#!/usr/bin/env bash
# Installs the pinned Temporal CLI (dev server + Web UI) into a cache outside the clone, so every
# checkout and every CI run on this machine reuses it. Prints the binary's path on the last line.
#   TEMPORAL_CLI_PATH   use this binary instead (nothing is installed)
#   TEMPORAL_CLI_CACHE  cache folder (default: ${XDG_CACHE_HOME:-$HOME/.cache}/financial-platform)
# Needs Go (go install through the Go module proxy). Without Go, `npm start` falls back to the
# Temporal SDK's own download of the CLI, which needs the internet.
set -euo pipefail
VERSION=v1.5.1
FALLBACK=v1.4.1   # later tags carry a `replace` directive that `go install` rejects

if [ -n "${TEMPORAL_CLI_PATH:-}" ]; then echo "$TEMPORAL_CLI_PATH"; exit 0; fi
cache="${TEMPORAL_CLI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/financial-platform}"
for v in "$VERSION" "$FALLBACK"; do
  if [ -x "$cache/temporal-$v/temporal" ]; then echo "$cache/temporal-$v/temporal"; exit 0; fi
done
if ! command -v go >/dev/null 2>&1; then
  echo "install-temporal-cli: Go is not installed; install Go or set TEMPORAL_CLI_PATH" >&2
  exit 3
fi
# A first build takes minutes: say so before it starts, and show that it is still going.
source "$(dirname "${BASH_SOURCE[0]}")/build-progress.sh"
for v in "$VERSION" "$FALLBACK"; do
  dir="$cache/temporal-$v"
  mkdir -p "$dir"
  echo "install-temporal-cli: no Temporal CLI in $cache yet: building temporal $v with go install, once (3 to 6 minutes on 2 cores; later starts reuse it)…" >&2
  build_progress install-temporal-cli 20 "3 to 6 minutes" >/dev/null & tick=$!   # not on stdout: the caller reads the path from it until it closes
  if GOBIN="$dir" GOFLAGS=-mod=mod go install "github.com/temporalio/cli/cmd/temporal@$v" >&2; then
    kill "$tick" 2>/dev/null || true
    echo "install-temporal-cli: built $dir/temporal" >&2
    echo "$dir/temporal"
    exit 0
  fi
  kill "$tick" 2>/dev/null || true
  echo "install-temporal-cli: go install of $v failed" >&2
done
exit 1
