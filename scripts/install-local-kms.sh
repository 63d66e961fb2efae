#!/usr/bin/env bash
# Installs local-kms (an AWS KMS-compatible server, github.com/nsmithuk/local-kms) into a cache outside
# the clone: the tests run the KMS key vault against it (docs/WALLETS.md). Prints the binary's path.
#   LOCAL_KMS_PATH   use this binary instead (nothing is installed)
#   TEMPORAL_CLI_CACHE  cache folder, shared with the Temporal CLI (default: ${XDG_CACHE_HOME:-$HOME/.cache}/financial-platform)
# Needs Go (go install through the Go module proxy).
set -euo pipefail
VERSION=v0.0.0-20260228092603-2a5e92d09ab6   # the module proxy's only version (the v3 tags are not served)

if [ -n "${LOCAL_KMS_PATH:-}" ]; then echo "$LOCAL_KMS_PATH"; exit 0; fi
dir="${TEMPORAL_CLI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/financial-platform}/local-kms-$VERSION"
if [ -x "$dir/local-kms" ]; then echo "$dir/local-kms"; exit 0; fi
if ! command -v go >/dev/null 2>&1; then
  echo "install-local-kms: Go is not installed; install Go or set LOCAL_KMS_PATH" >&2
  exit 3
fi
mkdir -p "$dir"
echo "install-local-kms: building local-kms with go install (once)…" >&2
GOBIN="$dir" GOFLAGS=-mod=mod go install "github.com/nsmithuk/local-kms@$VERSION" >&2
echo "$dir/local-kms"
