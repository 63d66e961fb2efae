# Shared by the install scripts that build a Go tool into the cache outside the clone (sourced).
# go_tool_cached NAME OVERRIDE_VAR BINARY: when $OVERRIDE_VAR is set, or BINARY is built already,
# prints that path and ends the script; otherwise checks that Go is installed (exit 3 if not) and
# creates BINARY's folder, for the script to build it.
go_tool_cached() {
  local name="$1" override_var="$2" binary="$3"
  local override="${!override_var:-}"
  if [ -n "$override" ]; then echo "$override"; exit 0; fi
  if [ -x "$binary" ]; then echo "$binary"; exit 0; fi
  if ! command -v go >/dev/null 2>&1; then
    echo "$name: Go is not installed; install Go or set $override_var" >&2
    exit 3
  fi
  mkdir -p "$(dirname "$binary")"
}
