#!/usr/bin/env bash
# Prints the bin folder of Node.js 24 from npm's `node` package, installed on first use into the ignored .node/:
# the binary comes from the npm registry, so no other download is needed.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$PWD/.node/node_modules/.bin"
if ! "$bin/node" --version 2>/dev/null | grep -q '^v24\.'; then
  npm install --prefix .node --no-save --no-audit --no-fund --loglevel=error node@24 >&2
fi
echo "$bin"
