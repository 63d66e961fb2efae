# Sourced by the install scripts: a first `go install` takes minutes, so a line on stderr every
# INTERVAL seconds shows it is still going. Usage: build_progress NAME INTERVAL "3 to 6 minutes"
# (run it in the background and kill it once the build ends).
build_progress() {
  local started=$SECONDS
  while sleep "$2"; do echo "$1: still building ($((SECONDS - started)) s so far; $3 on 2 cores)…" >&2; done
}
