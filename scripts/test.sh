#!/usr/bin/env bash
# npm test: lint, then the unit, integration and crash projects, on a Node.js line the service supports. Where the
# machine's own Node.js is not one of them (22 from 22.12, or 24), the tests run on Node 24 from scripts/node24.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a === 24 || (a === 22 && b >= 12) ? 0 : 1)'; then
  echo "Node.js $(node --version) is not a supported line (22 from 22.12, or 24): the tests run on Node 24" >&2
  PATH="$(bash scripts/node24.sh):$PATH"
  export PATH
fi
echo "tests on Node.js $(node --version)"
npm run lint
npx vitest run "$@"
