#!/usr/bin/env bash
# Installs the production Temporal parts for `npm run stack:cluster` into a cache outside the clone
# (like the CLI): the Temporal server and its SQL schema tool (which embeds the release's schemas),
# built from go.temporal.io/server at the release the CLI v1.5.1 embeds, and the Temporal UI server.
# Prints the install folder on the last line.
#   TEMPORAL_CLI_CACHE  cache folder (default: ${XDG_CACHE_HOME:-$HOME/.cache}/financial-platform)
# Keep the versions in step with src/cluster/layout.ts (a test compares them).
set -euo pipefail
SERVER_VERSION=v1.29.1
UI_VERSION=v2.42.1

cache="${TEMPORAL_CLI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/financial-platform}"
dir="$cache/temporal-server-$SERVER_VERSION"
ui_dir="$cache/temporal-ui-$UI_VERSION"
if [ -x "$dir/temporal-server" ] && [ -x "$dir/temporal-sql-tool" ] && [ -x "$ui_dir/ui-server" ]; then
  echo "$dir"; exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "install-temporal-server: Go is not installed (needed to build the Temporal server)" >&2
  exit 3
fi
source "$(dirname "${BASH_SOURCE[0]}")/build-progress.sh"
build() { # module path, binary name, target folder, target name
  local tmp; tmp="$(mktemp -d)"
  GOBIN="$tmp" GOFLAGS=-mod=mod go install "$1" >&2
  mkdir -p "$3" && mv "$tmp/$2" "$3/$4" && rmdir "$tmp"
}
echo "install-temporal-server: building the Temporal server $SERVER_VERSION and UI $UI_VERSION with go install, once (5 to 10 minutes on 2 cores)…" >&2
build_progress install-temporal-server 30 "5 to 10 minutes" >/dev/null & tick=$!
trap 'kill "$tick" 2>/dev/null || true' EXIT
[ -x "$dir/temporal-server" ] || build "go.temporal.io/server/cmd/server@$SERVER_VERSION" server "$dir" temporal-server
[ -x "$dir/temporal-sql-tool" ] || build "go.temporal.io/server/cmd/tools/sql@$SERVER_VERSION" sql "$dir" temporal-sql-tool
[ -x "$ui_dir/ui-server" ] || build "github.com/temporalio/ui-server/v2/cmd/server@$UI_VERSION" server "$ui_dir" ui-server
echo "install-temporal-server: built $dir and $ui_dir" >&2
echo "$dir"
