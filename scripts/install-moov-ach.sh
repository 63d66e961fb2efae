#!/usr/bin/env bash
# Builds the NACHA checker the tests use (test/tools/moov-ach-validate: moov-io/ach's reader and
# Validate(), pinned in its go.mod) into a cache outside the clone, so every checkout and CI run on
# this machine reuses it. Prints its path on the last line.
#   MOOV_ACH_VALIDATE  use this binary instead (nothing is built)
#   MOOV_ACH_CACHE     cache folder (default: ${XDG_CACHE_HOME:-$HOME/.cache}/financial-platform)
# Needs Go (modules through the Go module proxy).
set -euo pipefail
VERSION=v1.46.0
if [ -n "${MOOV_ACH_VALIDATE:-}" ]; then echo "$MOOV_ACH_VALIDATE"; exit 0; fi
source_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/../test/tools/moov-ach-validate" && pwd)"
cache="${MOOV_ACH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/financial-platform}"
# The source's hash in the folder's name: a change to the checker builds it again.
hash="$(cat "$source_dir"/go.mod "$source_dir"/go.sum "$source_dir"/main.go | sha256sum | cut -c1-12)"
dir="$cache/moov-ach-$VERSION-$hash"
if [ -x "$dir/ach-validate" ]; then echo "$dir/ach-validate"; exit 0; fi
if ! command -v go >/dev/null 2>&1; then
  echo "install-moov-ach: Go is not installed; install Go or set MOOV_ACH_VALIDATE" >&2
  exit 3
fi
mkdir -p "$dir"
echo "install-moov-ach: building the moov-io/ach $VERSION checker, once (about a minute)…" >&2
if (cd "$source_dir" && GOFLAGS=-mod=mod go build -o "$dir/ach-validate" .) >&2; then
  echo "$dir/ach-validate"
  exit 0
fi
echo "install-moov-ach: go build failed" >&2
exit 1
