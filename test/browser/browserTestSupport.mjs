// @ts-check
/**
 * What the browser end-to-end tests share: a failure type whose message is the report, a command runner
 * that keeps its output in a log file, the VSIX under test (built with `npm run package`, or $VSIX), and
 * the frame around each test's steps (run folder, code-server, Chromium, cleanup).
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { REPO_ROOT, createRunDir, installVsix, launchBrowser, startCodeServer } from '../../scripts/vscode-host/code-server-host.mjs';

/** A test step that did not see what it expected; its message is printed as the reason. */
export class TestFailure extends Error {}

/**
 * `npm run package` bundles, writes the notices and packs about 25 MB. On a clean clone it also compresses
 * onnxruntime's library with brotli's best setting, once (.cache/package keeps it): 4.5 minutes on an idle
 * 2-core machine, which a loaded one can take past 5. Later builds take seconds.
 */
const PACKAGE_TIMEOUT_MS = 900_000;

/**
 * Runs a command, keeps its output in `logFile`, and fails with the output's tail if it exits non-zero.
 * @param {string} command
 * @param {string[]} args
 * @param {{ env: NodeJS.ProcessEnv, logFile: string, timeoutMs: number, cwd?: string }} options
 */
export async function runLogged(command, args, { env, logFile, timeoutMs, cwd = REPO_ROOT }) {
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
  const code = await new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (exitCode, signal) => resolve(exitCode ?? signal));
  }).finally(() => clearTimeout(timer));
  await writeFile(logFile, output);
  if (code !== 0) {
    const tail = output.trimEnd().split('\n').slice(-25).join('\n');
    throw new TestFailure(`\`${command} ${args.join(' ')}\` failed (${code}); full output in ${logFile}:\n${tail}`);
  }
}

/**
 * The VSIX to install: $VSIX if set (it must exist), else a fresh `npm run package`.
 * @param {import('../../scripts/vscode-host/code-server-host.mjs').RunDir} run
 * @param {(message: string) => void} log
 */
export async function vsixToTest(run, log) {
  if (process.env.VSIX) {
    const given = path.resolve(process.env.VSIX);
    if (!existsSync(given) || !statSync(given).isFile()) throw new TestFailure(`VSIX=${process.env.VSIX} is not a file (${given})`);
    log(`using VSIX ${given}`);
    return given;
  }
  const { name, version } = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8'));
  const target = `${process.platform}-${process.arch}`; // what scripts/package.mjs builds by default
  const built = path.join(REPO_ROOT, 'out', `${name}-${target}-${version}.vsix`);
  log('building the VSIX: npm run package');
  await runLogged('npm', ['run', 'package'], {
    // npm writes a debug log under ~/.npm/_logs on every run, and checks for updates: both kept out of $HOME.
    env: {
      ...process.env,
      TMPDIR: run.env.TMPDIR,
      npm_config_logs_dir: path.join(run.logsDir, 'npm'),
      npm_config_update_notifier: 'false',
      npm_config_fund: 'false',
    },
    logFile: path.join(run.logsDir, 'package.log'),
    timeoutMs: PACKAGE_TIMEOUT_MS,
  });
  if (!existsSync(built)) throw new TestFailure(`npm run package succeeded but ${built} is missing (see ${path.join(run.logsDir, 'package.log')})`);
  log(`built ${path.relative(REPO_ROOT, built)} (${(statSync(built).size / 1024 / 1024).toFixed(2)} MB)`);
  return built;
}

/**
 * @typedef {object} BrowserTestOptions
 * @property {string} label                       the run folder's label
 * @property {(message: string) => void} log
 * @property {string} [artifactsDir]              where screenshots go (default test-artifacts/browser)
 * @property {Record<string, string>} screenshots  every screenshot file of the test (cleared first); `failure` is taken on a failure
 * @property {(run: import('../../scripts/vscode-host/code-server-host.mjs').RunDir) => Promise<string[]>} [vsixes]  the VSIXs to install (default: the router's, vsixToTest)
 * @property {(folder: string) => Promise<void>} writeWorkspace
 * @property {Record<string, unknown>} settings    user settings for the workbench
 * @property {{ width: number, height: number }} [viewport]  default 1280 × 800
 * @property {(test: { page: import('playwright-core').Page, url: string, workspace: string }) => Promise<void>} steps
 */

/**
 * The frame every browser test shares: a fresh run folder, the VSIXs installed into a fresh extensions
 * folder, code-server on the test's workspace (no smoke-test driver, so notifications show as a person
 * sees them), Chromium, the test's steps, a screenshot on failure, and cleanup of the browser and
 * code-server's whole process group even on Ctrl+C. Returns the exit code: 0 passed, 1 failed.
 * @param {BrowserTestOptions} given
 */
export async function runBrowserTest(given) {
  const options = {
    artifactsDir: path.join(REPO_ROOT, 'test-artifacts', 'browser'),
    vsixes: async (/** @type {import('../../scripts/vscode-host/code-server-host.mjs').RunDir} */ run) => [await vsixToTest(run, given.log)],
    viewport: { width: 1280, height: 800 },
    ...given,
  };
  const { log } = options;
  await mkdir(options.artifactsDir, { recursive: true });
  // Screenshots of an earlier run must not pass for this one's.
  await Promise.all(Object.values(options.screenshots).map((file) => rm(path.join(options.artifactsDir, file), { force: true })));
  const run = await createRunDir(options.label);
  log(`run folder ${path.relative(REPO_ROOT, run.dir)}`);
  /** @type {import('../../scripts/vscode-host/code-server-host.mjs').CodeServer | undefined} */
  let server;
  /** @type {Awaited<ReturnType<typeof launchBrowser>> | undefined} */
  let browser;
  let failed = true;
  /** @type {string | undefined} */
  let interrupted;
  const cleanUp = async () => {
    const [b, s] = [browser, server];
    browser = undefined;
    server = undefined;
    await b?.close().catch((error) => log(`closing the browser: ${error.message}`));
    await s?.stop().catch((error) => log(`stopping code-server: ${error.message}`));
  };
  // Ctrl+C or a CI timeout: still close the browser and end code-server's process group.
  for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
    process.once(signal, () => {
      interrupted = signal;
      log(`${signal}: cleaning up`);
      void cleanUp().finally(() => process.exit(1));
    });
  }
  try {
    for (const file of await options.vsixes(run)) await installVsix(file, { extensionsDir: run.extensionsDir, userDataDir: run.userDataDir, runDir: run });
    log('VSIXs installed into a fresh extensions folder');
    const workspace = path.join(run.dir, 'workspace');
    await options.writeWorkspace(workspace);
    server = await startCodeServer({ folder: workspace, runDir: run, extensionsDir: run.extensionsDir, settings: options.settings });
    log(`code-server at ${server.url}`);
    const exitedEarly = new Promise((_, reject) => {
      server?.onExit((code, signal) => reject(new TestFailure(`code-server exited during the test (code ${code}, signal ${signal})`)));
    });
    exitedEarly.catch(() => undefined);
    browser = await launchBrowser({ runDir: run });
    await browser.page.setViewportSize(options.viewport);
    await Promise.race([options.steps({ page: browser.page, url: server.workbenchUrl({ folder: workspace }), workspace, run }), exitedEarly]);
    failed = false;
  } catch (error) {
    const reason = error instanceof TestFailure ? error.message : /** @type {Error} */ (error).stack ?? String(error);
    log(`FAILED: ${interrupted ? `interrupted by ${interrupted}` : reason}`);
    const failureShot = options.screenshots['failure'];
    if (browser && failureShot) {
      await browser.page
        .screenshot({ path: path.join(options.artifactsDir, failureShot) })
        .then(() => log(`screenshot ${path.relative(REPO_ROOT, path.join(options.artifactsDir, failureShot))}`))
        .catch(() => undefined);
    }
    log(`logs: ${path.relative(REPO_ROOT, run.logsDir)} (code-server.log); extension host logs under ${path.relative(REPO_ROOT, run.userDataDir)}/logs`);
  } finally {
    await cleanUp();
  }
  log(failed ? 'FAILED' : 'PASSED');
  return failed ? 1 : 0;
}
