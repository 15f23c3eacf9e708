// @ts-check
/**
 * What the browser end-to-end tests share: a failure type whose message is the report, a command runner
 * that keeps its output in a log file, and the VSIX under test (built with `npm run package`, or $VSIX).
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { REPO_ROOT } from '../../scripts/vscode-host/code-server-host.mjs';

/** A test step that did not see what it expected; its message is printed as the reason. */
export class TestFailure extends Error {}

/** `npm run package` bundles, writes the notices and packs about 25 MB: a few seconds here, more when loaded. */
const PACKAGE_TIMEOUT_MS = 300_000;

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
