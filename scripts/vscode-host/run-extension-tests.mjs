#!/usr/bin/env node
// @ts-check
/**
 * Runs an extension's test suite (its extensionTestsPath module, e.g. a mocha
 * runner) inside a real VS Code extension host: code-server, driven by headless
 * Chromium, offline. Exits with the suite's result.
 *
 *   node scripts/vscode-host/run-extension-tests.mjs \
 *     --extensionDevelopmentPath=DIR --extensionTestsPath=FILE [--folder=WORKSPACE] [--timeout=MS]
 *
 * It also takes the arguments @vscode/test-electron passes to a desktop VS Code
 * (a positional workspace, --user-data-dir, --extensions-dir, --disable-extensions,
 * and desktop-only flags it ignores), so code-test-executable can stand in for one.
 *
 * Environment variables given to this process reach the extension host.
 * VSCODE_HOST_VERBOSE=1 also prints code-server's output and the workbench's own log.
 */
import { mkdirSync, readFileSync, statSync, writeFileSync, appendFileSync } from 'node:fs';
import path from 'node:path';
import { format } from 'node:util';
import { codeServerInstallation, createRunDir, developmentPayload, launchBrowser, startCodeServer } from './code-server-host.mjs';

/** Distinct codes so CI can tell a failing suite from a broken harness. */
const EXIT = Object.freeze({
  PASSED: 0,
  FAILED: 1, // the suite ran and failed (or the extension host died while running it)
  USAGE: 2, // bad arguments
  HOST_FAILED: 3, // code-server or the browser did not start, or went away
  TIMEOUT: 4, // no result within --timeout
  INTERRUPTED: 130, // SIGINT/SIGTERM
});

/**
 * Start to result took 6–8.5 s for the three-test self-test on 2 cores; real suites
 * start MCP servers and models. Five minutes still ends a hung CI job in time.
 */
const DEFAULT_TIMEOUT_MS = 300_000;

/** Flags that take a value, so "--flag value" (Electron also accepts it) is read as one. */
const VALUE_FLAGS = new Set(['extensionDevelopmentPath', 'extensionTestsPath', 'folder', 'folder-uri', 'timeout', 'user-data-dir', 'extensions-dir']);
/**
 * Flags @vscode/test-electron always passes to a desktop VS Code. They have no meaning
 * for code-server (the browser runs headless, updates and workspace trust are off anyway),
 * so they are dropped silently; any other unknown flag is reported.
 */
const TEST_ELECTRON_FLAGS = new Set(['no-sandbox', 'disable-gpu-sandbox', 'disable-updates', 'skip-welcome', 'skip-release-notes', 'disable-workspace-trust']);
/** Desktop flags with a value that mean nothing here; their value must not be taken for the workspace. */
const IGNORED_VALUE_FLAGS = new Set(['crash-reporter-directory', 'logsPath', 'locale', 'log', 'profile', 'inspect-extensions', 'inspect-brk-extensions', 'remote']);

/**
 * Extension host console output reaches us through the workbench's log, mixed with
 * the workbench's own lines. These are the workbench's routine lines seen in test
 * runs; hidden unless verbose (all lines are always in logs/automation.log).
 */
const WORKBENCH_NOISE = [
  /^(Resolving|Resolved) connection token/,
  /^Creating a socket \(/,
  /^\[reconnection-grace-time\]/,
  /^\[(AgentHost|AgentHostChannel|ChatModelSelection|AccountPolicyGate|Service Worker)/,
  /^Updating additional builtin extensions cache/,
  /^Ignoring fetching additional builtin extensions from gallery/, // the gallery is off on purpose
  /^Started local extension host with pid/,
  /^Creation of workbench contribution '.*' took \d+ms/,
];

/**
 * Errors thrown inside the workbench carry stack frames in the workbench bundle the
 * server serves over HTTP; extension host errors point at files on disk. The former
 * (e.g. "Canceled" while the extension host shuts down) are not the suite's.
 */
const WORKBENCH_STACK_FRAME = /\(https?:\/\/[^)]*\/workbench\/workbench\.js:\d+:\d+\)/;

/** @param {string} message */
const note = (message) => process.stderr.write(`[vscode-host] ${message}\n`);

class UsageError extends Error {}

const USAGE = `usage: run-extension-tests.mjs --extensionDevelopmentPath=DIR --extensionTestsPath=FILE
                              [--folder=WORKSPACE | WORKSPACE] [--timeout=MS]
                              [--user-data-dir=DIR] [--extensions-dir=DIR] [--disable-extensions]
exit codes: 0 passed, 1 failed, 2 usage, 3 code-server/browser failure, 4 timeout`;

/**
 * @typedef {object} Options
 * @property {string[]} extensionDevelopmentPaths
 * @property {string} extensionTestsPath
 * @property {string | undefined} workspace  folder or .code-workspace file; none: empty window
 * @property {number} timeoutMs
 * @property {string | undefined} userDataDir
 * @property {string | undefined} extensionsDir
 * @property {boolean} disableExtensions
 * @property {boolean} verbose
 * @property {string[]} ignored
 */

/**
 * @param {string[]} argv
 * @returns {Options | 'help' | 'version'}
 */
function parseArgs(argv) {
  /** @type {string[]} */ const developmentPaths = [];
  /** @type {string[]} */ const positional = [];
  /** @type {string[]} */ const ignored = [];
  /** @type {Record<string, string>} */ const values = {};
  let disableExtensions = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    let value = eq === -1 ? undefined : arg.slice(eq + 1);
    if (value === undefined && (VALUE_FLAGS.has(name) || IGNORED_VALUE_FLAGS.has(name))) {
      value = argv[++i];
      if (value === undefined) throw new UsageError(`--${name} needs a value`);
    }
    if (name === 'help') return 'help';
    if (name === 'version') return 'version';
    if (name === 'disable-extensions') disableExtensions = true;
    else if (name === 'extensionDevelopmentPath') developmentPaths.push(/** @type {string} */ (value));
    else if (VALUE_FLAGS.has(name)) values[name] = /** @type {string} */ (value);
    else if (!TEST_ELECTRON_FLAGS.has(name)) ignored.push(IGNORED_VALUE_FLAGS.has(name) ? `--${name}=${value}` : arg);
  }

  if (developmentPaths.length === 0) throw new UsageError('--extensionDevelopmentPath is required');
  const extensionDevelopmentPaths = developmentPaths.map((p) => path.resolve(p));
  for (const dir of extensionDevelopmentPaths) {
    if (!isFile(path.join(dir, 'package.json'))) {
      throw new UsageError(`--extensionDevelopmentPath ${dir} is not an extension folder (no package.json)`);
    }
  }
  if (!values.extensionTestsPath) throw new UsageError('--extensionTestsPath is required');
  const extensionTestsPath = path.resolve(values.extensionTestsPath);
  // The extension host require()s it, so "suite/index" may name suite/index.js or suite/index/.
  const candidates = ['', '.js', '.cjs', '.mjs', '/index.js', '/index.cjs', '/index.mjs'].map((ext) => extensionTestsPath + ext);
  if (!candidates.some(isFile)) throw new UsageError(`--extensionTestsPath ${extensionTestsPath} does not name a module (tried ${candidates.join(', ')})`);

  if (values.folder && values['folder-uri']) throw new UsageError('give --folder or --folder-uri, not both');
  let workspace = values.folder ?? (values['folder-uri'] ? fileUriToPath(values['folder-uri']) : positional.at(-1));
  if (workspace !== undefined) {
    workspace = path.resolve(workspace);
    if (!exists(workspace)) throw new UsageError(`workspace ${workspace} does not exist`);
  }

  let timeoutMs = DEFAULT_TIMEOUT_MS;
  if (values.timeout !== undefined) {
    timeoutMs = Number(values.timeout);
    if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) throw new UsageError(`--timeout must be a positive number of milliseconds, got "${values.timeout}"`);
  }
  return {
    extensionDevelopmentPaths,
    extensionTestsPath,
    workspace,
    timeoutMs,
    userDataDir: values['user-data-dir'] && path.resolve(values['user-data-dir']),
    extensionsDir: values['extensions-dir'] && path.resolve(values['extensions-dir']),
    disableExtensions,
    verbose: process.env.VSCODE_HOST_VERBOSE === '1',
    ignored,
  };
}

/** @param {string} uri */
function fileUriToPath(uri) {
  const parsed = new URL(uri);
  if (parsed.protocol !== 'file:') throw new UsageError(`--folder-uri must be a file: URI, got ${uri}`);
  return decodeURIComponent(parsed.pathname);
}

/** @param {string} p */
function exists(p) {
  try {
    statSync(p);
    return true;
  } catch {
    return false;
  }
}

/** @param {string} p */
function isFile(p) {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/** Same shape as a desktop `code --version`: version, commit, architecture. */
function printVersion() {
  const { vscodeDir } = codeServerInstallation();
  const { version } = JSON.parse(readFileSync(path.join(vscodeDir, 'package.json'), 'utf8'));
  const { commit } = JSON.parse(readFileSync(path.join(vscodeDir, 'product.json'), 'utf8'));
  process.stdout.write(`${version}\n${commit ?? ''}\n${process.arch}\n`);
}

/**
 * Writes the log files the workbench hands to codeAutomationExit into the run folder.
 * @param {string} logsDir
 * @param {unknown} logs  [{ relativePath, contents }]
 */
function saveWorkbenchLogs(logsDir, logs) {
  if (!Array.isArray(logs)) return;
  const root = path.join(logsDir, 'workbench');
  for (const { relativePath, contents } of logs) {
    const file = path.resolve(root, String(relativePath));
    if (!file.startsWith(root + path.sep)) continue; // never write outside the run folder
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, String(contents));
  }
}

/**
 * @param {Options} options
 * @returns {Promise<number>} exit code
 */
async function runSuite(options) {
  const startedAt = Date.now();
  const seconds = () => ((Date.now() - startedAt) / 1000).toFixed(1);
  if (options.ignored.length > 0) note(`ignoring arguments that mean nothing here: ${options.ignored.join(' ')}`);
  let runDir;
  try {
    codeServerInstallation(); // fail before making a run folder when nothing is provisioned
    runDir = await createRunDir('extension-tests');
  } catch (error) {
    note(/** @type {Error} */ (error).message);
    return EXIT.HOST_FAILED;
  }
  const automationLog = path.join(runDir.logsDir, 'automation.log');

  /** @type {Awaited<ReturnType<typeof startCodeServer>> | undefined} */
  let server;
  /** @type {Awaited<ReturnType<typeof launchBrowser>> | undefined} */
  let browser;
  const cleanUp = async () => {
    await browser?.close().catch(() => {}); // already gone is fine
    await server?.stop();
  };
  for (const [signal, code] of /** @type {const} */ ([['SIGINT', EXIT.INTERRUPTED], ['SIGTERM', EXIT.INTERRUPTED + 13]])) {
    process.once(signal, () => {
      note(`${signal}: stopping code-server and the browser`);
      void cleanUp().finally(() => process.exit(code));
    });
  }

  try {
    try {
      server = await startCodeServer({
        // code-server needs a folder to start in; the page URL decides what is opened.
        folder: options.workspace ?? runDir.dir,
        smokeTestDriver: true,
        runDir,
        userDataDir: options.userDataDir,
        extensionsDir: options.extensionsDir,
        onOutput: options.verbose ? (line) => note(`code-server: ${line}`) : undefined,
      });
      if (options.verbose) note(`code-server answered /healthz after ${seconds()} s`);
      browser = await launchBrowser({ runDir });
    } catch (error) {
      note(`could not start VS Code: ${/** @type {Error} */ (error).message}`);
      note(`run folder: ${runDir.dir}`);
      return EXIT.HOST_FAILED;
    }
    if (options.verbose) note(`code-server and browser ready after ${seconds()} s: ${server.url}; run folder ${runDir.dir}`);

    /** @type {(outcome: { kind: 'exit', code: unknown } | { kind: 'timeout' | 'crash' } | { kind: 'server-exit', code: number | null }) => void} */
    let settle = () => {};
    const outcome = new Promise((resolve) => (settle = resolve));
    const { page } = browser;

    await page.exposeFunction('codeAutomationExit', (/** @type {unknown} */ code, /** @type {unknown} */ logs) => {
      saveWorkbenchLogs(runDir.logsDir, logs);
      settle({ kind: 'exit', code });
    });
    let settled = false;
    let hiddenLines = 0;
    void outcome.then(() => (settled = true));
    await page.exposeFunction('codeAutomationLog', (/** @type {string} */ level, /** @type {unknown} */ args) => {
      // Extension host console calls arrive as console arguments (format string first).
      const text = Array.isArray(args) ? format(...args) : String(args);
      appendFileSync(automationLog, `[${level}] ${text}\n`);
      // After the result only the workbench's shutdown ("Canceled" errors) is left to print.
      if (!options.verbose && (settled || WORKBENCH_NOISE.some((pattern) => pattern.test(text)) || WORKBENCH_STACK_FRAME.test(text))) {
        hiddenLines++;
        return;
      }
      (level === 'error' || level === 'warn' ? process.stderr : process.stdout).write(`${text}\n`);
    });
    page.on('crash', () => settle({ kind: 'crash' }));
    if (options.verbose) page.on('pageerror', (error) => note(`page error: ${error.message}`));
    server.onExit((code) => settle({ kind: 'server-exit', code }));
    const timer = setTimeout(() => settle({ kind: 'timeout' }), options.timeoutMs);

    /** @type {Record<string, string>} */
    const query = {
      payload: developmentPayload(server, {
        extensionDevelopmentPaths: options.extensionDevelopmentPaths,
        extensionTestsPath: options.extensionTestsPath,
        disableExtensions: options.disableExtensions,
      }),
    };
    if (options.workspace === undefined) query.ew = 'true'; // empty window, like desktop VS Code without a folder
    else if (isFile(options.workspace)) query.workspace = options.workspace;
    else query.folder = options.workspace;

    try {
      await page.goto(server.workbenchUrl(query));
      if (options.verbose) note(`workbench page loaded after ${seconds()} s`);
    } catch (error) {
      settle({ kind: 'crash' });
      note(`could not open the workbench: ${/** @type {Error} */ (error).message}`);
    }
    const result = /** @type {Awaited<typeof outcome>} */ (await outcome);
    clearTimeout(timer);
    if (hiddenLines > 0) note(`${hiddenLines} workbench log lines not shown (VSCODE_HOST_VERBOSE=1 shows them): ${automationLog}`);

    switch (result.kind) {
      case 'exit': {
        const passed = result.code === 0;
        note(`suite ${passed ? 'passed' : `failed (extension host exit code ${String(result.code)})`} after ${seconds()} s; logs: ${runDir.logsDir}`);
        return passed ? EXIT.PASSED : EXIT.FAILED;
      }
      case 'timeout':
        note(
          `no result after ${options.timeoutMs} ms (--timeout): the suite's run() never settled or the extension host hung. ` +
            `Logs: ${runDir.logsDir} (automation.log, code-server.log) and ${path.join(runDir.userDataDir, 'logs')}`,
        );
        return EXIT.TIMEOUT;
      case 'server-exit':
        note(`code-server exited (code ${result.code}) before the suite finished; see ${server.logFile}`);
        return EXIT.HOST_FAILED;
      case 'crash':
        note(`the browser page crashed or could not load before the suite finished; logs: ${runDir.logsDir}`);
        return EXIT.HOST_FAILED;
      default:
        return EXIT.HOST_FAILED;
    }
  } finally {
    await cleanUp();
    if (options.verbose) note(`code-server and browser stopped after ${seconds()} s`);
  }
}

async function main() {
  let options;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    note(error.message);
    process.stderr.write(`${USAGE}\n`);
    return EXIT.USAGE;
  }
  if (options === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return EXIT.PASSED;
  }
  if (options === 'version') {
    printVersion();
    return EXIT.PASSED;
  }
  return runSuite(options);
}

main().then(
  (code) => process.exit(code), // exit now: playwright can keep handles open for a while
  (error) => {
    note(`unexpected failure: ${error instanceof Error ? error.stack : String(error)}`);
    process.exit(EXIT.HOST_FAILED);
  },
);
