#!/usr/bin/env bash
# Sets up a fresh machine and runs every test (the command the README gives and CI runs):
# npm packages, then a real VS Code 1.139 host (code-server on Node 24, Debian's Chromium), then `npm test`.
set -euo pipefail
cd "$(dirname "$0")/.."
export ONNXRUNTIME_NODE_INSTALL=skip
bash scripts/setup.sh
bash scripts/vscode-host/provision.sh
npm test
