#!/usr/bin/env bash
# Builds the tests' moov-io/ach tool (test/tools/moov-ach: moov-io/ach's reader and Validate(), and
# its writer for the test bank's answer files, pinned in its go.mod) into a cache outside the clone,
# so every checkout and CI run on this machine reuses it. Prints its path on the last line.
#   MOOV_ACH_TOOL      use this binary instead (nothing is built)
#   MOOV_ACH_CACHE     cache folder (default: ${XDG_CACHE_HOME:-$HOME/.cache}/financial-platform)
# Needs Go (modules through the Go module proxy).
set -euo pipefail
VERSION=v1.46.0
source_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/../test/tools/moov-ach" && pwd)"
cache="${MOOV_ACH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/financial-platform}"
# The source's hash in the folder's name: a change to the tool builds it again.
hash="$(cat "$source_dir"/go.mod "$source_dir"/go.sum "$source_dir"/*.go | sha256sum | cut -c1-12)"
dir="$cache/moov-ach-$VERSION-$hash"
source "$(dirname "${BASH_SOURCE[0]}")/go-tool-cache.sh"
go_tool_cached install-moov-ach MOOV_ACH_TOOL "$dir/moov-ach"
echo "install-moov-ach: building the moov-io/ach $VERSION tool, once (about a minute)…" >&2
if (cd "$source_dir" && GOFLAGS=-mod=mod go build -o "$dir/moov-ach" .) >&2; then
  echo "$dir/moov-ach"
  exit 0
fi
echo "install-moov-ach: go build failed" >&2
exit 1
