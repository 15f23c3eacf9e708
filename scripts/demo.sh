#!/usr/bin/env bash
# The main job on a fresh machine: set up, build the VSIX, and start a real VS Code (code-server) with the
# extension installed and a demo mcp.json open. Prints the URL. Extra arguments go to scripts/demo.mjs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/vscode-host/provision.sh
exec node scripts/demo.mjs "$@"
