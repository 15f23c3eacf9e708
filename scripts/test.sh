#!/usr/bin/env bash
# Sets up a fresh machine and runs every test (the command the README gives and CI runs).
set -euo pipefail
cd "$(dirname "$0")/.."
export ONNXRUNTIME_NODE_INSTALL=skip
bash scripts/setup.sh
npm test
