#!/usr/bin/env bash
# The main job on a fresh machine: set up, then drive the router from its CLI against the demo servers.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null
mkdir -p .cache
cli=(node dist/cli.js --config examples/mcp.json --workspace "$PWD")
echo "== servers"; "${cli[@]}" servers
echo "== tools"; "${cli[@]}" tools
echo "== call everything_echo"; "${cli[@]}" call everything_echo --args '{"message":"hello from MCP Tool Router"}'
echo "== call everything_get-sum with string numbers (normalised)"; "${cli[@]}" call everything_get-sum --args '{"a":"2","b":"40"}'
echo "== call with invalid arguments (exit code 2, server not called)"; "${cli[@]}" call everything_get-sum --args '{"a":"two"}' || echo "exit code $?"
