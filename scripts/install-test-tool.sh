#!/usr/bin/env bash
# Builds one of the tests' Go tools (test/tools/NAME: moov-io/ach or moov-io/bai2, implementations
# this project did not write, each pinned in its go.mod) into a cache outside the clone, so every
# checkout and CI run on this machine reuses it. Prints its path on the last line.
#   bash scripts/install-test-tool.sh moov-ach | moov-bai2
#   MOOV_ACH_TOOL, MOOV_BAI2_TOOL   use this binary instead (nothing is built)
#   TEST_TOOLS_CACHE                cache folder (default: ${XDG_CACHE_HOME:-$HOME/.cache}/financial-platform)
# Needs Go (modules through the Go module proxy).
set -euo pipefail
name="${1:?usage: install-test-tool.sh moov-ach|moov-bai2}"
source_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/../test/tools/$name" && pwd)"
cache="${TEST_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/financial-platform}"
# The source's hash in the folder's name: a change to the tool (or its pinned version) builds it again.
hash="$(cat "$source_dir"/go.mod "$source_dir"/go.sum "$source_dir"/*.go | sha256sum | cut -c1-12)"
dir="$cache/$name-$hash"
source "$(dirname "${BASH_SOURCE[0]}")/go-tool-cache.sh"
go_tool_cached "install-$name" "$(echo "$name" | tr 'a-z-' 'A-Z_')_TOOL" "$dir/$name"
echo "install-$name: building the $name tool, once (about a minute)…" >&2
if (cd "$source_dir" && GOFLAGS=-mod=mod go build -o "$dir/$name" .) >&2; then
  echo "$dir/$name"
  exit 0
fi
echo "install-$name: go build failed" >&2
exit 1
