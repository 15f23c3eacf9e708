#!/usr/bin/env bash
# Proves the harness end to end: the throwaway extension in test/vscode-host-selftest
# runs its mocha suite in a real VS Code, and the runner's exit code follows the
# suite: 0 when it passes, 1 when a test fails, 4 when run() never settles.
# Then ui-smoke.mjs drives the same extension through the workbench UI.
# Needs scripts/vscode-host/provision.sh and playwright-core (npm install) first.
set -uo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/../.." && pwd)"
readonly SCRIPT_DIR REPO_ROOT
readonly EXTENSION="$REPO_ROOT/test/vscode-host-selftest"
# The suite settles in under 10 s here; 20 s proves the timeout without a long wait.
readonly HANG_TIMEOUT_MS=20000

failures=0

# expect <label> <expected exit code> [ENV=value ...] -- [runner args ...]
expect() {
  local label="$1" expected="$2"; shift 2
  local env_vars=()
  while [[ $# -gt 0 && "$1" != "--" ]]; do env_vars+=("$1"); shift; done
  shift # the --
  local start=$SECONDS code
  echo "=== $label: expecting exit code $expected"
  # The marker proves variables given to the runner reach the extension host.
  env SELFTEST_MARKER=from-runner "${env_vars[@]}" \
    "$SCRIPT_DIR/code-test-executable" \
    --extensionDevelopmentPath="$EXTENSION" \
    --extensionTestsPath="$EXTENSION/suite/index" \
    --folder="$EXTENSION" "$@"
  code=$?
  if [[ $code -eq $expected ]]; then
    echo "=== $label: OK (exit $code, $((SECONDS - start)) s)"
  else
    echo "=== $label: WRONG (exit $code, expected $expected, $((SECONDS - start)) s)" >&2
    failures=$((failures + 1))
  fi
}

expect "passing suite" 0 --
expect "failing suite (SELFTEST_FAIL=1)" 1 SELFTEST_FAIL=1 --
expect "hanging suite (SELFTEST_HANG=1)" 4 SELFTEST_HANG=1 -- --timeout="$HANG_TIMEOUT_MS"

echo "=== UI smoke (command palette in headless Chromium): expecting exit code 0"
start=$SECONDS
if node "$SCRIPT_DIR/ui-smoke.mjs"; then
  echo "=== UI smoke: OK ($((SECONDS - start)) s)"
else
  echo "=== UI smoke: WRONG (exit $?, $((SECONDS - start)) s)" >&2
  failures=$((failures + 1))
fi

if [[ $failures -gt 0 ]]; then
  echo "vscode-host selftest: $failures case(s) wrong" >&2
  exit 1
fi
echo "vscode-host selftest: all cases OK"
