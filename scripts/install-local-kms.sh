#!/usr/bin/env bash
# Installs local-kms (an AWS KMS-compatible server, github.com/nsmithuk/local-kms) into a cache outside
# the clone: the tests run the KMS key vault against it (docs/WALLETS.md). Prints the binary's path.
#   LOCAL_KMS_PATH   use this binary instead (nothing is installed)
#   TEMPORAL_CLI_CACHE  cache folder, shared with the Temporal CLI (default: ${XDG_CACHE_HOME:-$HOME/.cache}/financial-platform)
# Needs Go (go install through the Go module proxy).
set -euo pipefail
VERSION=v0.0.0-20260228092603-2a5e92d09ab6   # the module proxy's only version (the v3 tags are not served)

dir="${TEMPORAL_CLI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/financial-platform}/local-kms-$VERSION"
source "$(dirname "${BASH_SOURCE[0]}")/go-tool-cache.sh"
go_tool_cached install-local-kms LOCAL_KMS_PATH "$dir/local-kms"
echo "install-local-kms: building local-kms with go install (once)…" >&2
GOBIN="$dir" GOFLAGS=-mod=mod go install "github.com/nsmithuk/local-kms@$VERSION" >&2
echo "$dir/local-kms"
