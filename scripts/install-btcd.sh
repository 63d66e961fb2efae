#!/usr/bin/env bash
# Installs the pinned btcd (Bitcoin full node) and btcctl into a cache outside the clone, so every
# checkout and every CI run on this machine reuses them. Prints btcd's path on the last line.
#   BTCD_PATH   use this binary instead (nothing is installed)
#   BTCD_CACHE  cache folder (default: ${XDG_CACHE_HOME:-$HOME/.cache}/financial-platform)
# Needs Go (go install through the Go module proxy).
set -euo pipefail
VERSION=v0.24.2

if [ -n "${BTCD_PATH:-}" ]; then echo "$BTCD_PATH"; exit 0; fi
cache="${BTCD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/financial-platform}"
dir="$cache/btcd-$VERSION"
if [ -x "$dir/btcd" ] && [ -x "$dir/btcctl" ]; then echo "$dir/btcd"; exit 0; fi
if ! command -v go >/dev/null 2>&1; then
  echo "install-btcd: Go is not installed; install Go or set BTCD_PATH" >&2
  exit 3
fi
source "$(dirname "${BASH_SOURCE[0]}")/build-progress.sh"
mkdir -p "$dir"
echo "install-btcd: no btcd in $cache yet: building btcd $VERSION with go install, once (1 to 3 minutes on 2 cores)…" >&2
build_progress install-btcd 20 "1 to 3 minutes" >/dev/null & tick=$!
if GOBIN="$dir" GOFLAGS=-mod=mod go install "github.com/btcsuite/btcd@$VERSION" "github.com/btcsuite/btcd/cmd/btcctl@$VERSION" >&2; then
  kill "$tick" 2>/dev/null || true
  echo "install-btcd: built $dir/btcd" >&2
  echo "$dir/btcd"
  exit 0
fi
kill "$tick" 2>/dev/null || true
echo "install-btcd: go install of $VERSION failed" >&2
exit 1
