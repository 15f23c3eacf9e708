#!/usr/bin/env node
// @ts-check
/**
 * An `${input:…}` server in the installed VSIX, as a person meets it: VS Code asks for the value once
 * (typed into the input box here), keeps it in SecretStorage (a reload starts the server without asking),
 * never writes it to the workspace, settings or any log, and "Tool Router: Clear Saved Inputs" forgets
 * it (the next start asks again).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { REPO_ROOT } from '../../scripts/vscode-host/code-server-host.mjs';
import { TestFailure, runBrowserTest } from './browserTestSupport.mjs';

const ARTIFACTS_DIR = path.join(REPO_ROOT, 'test-artifacts', 'browser');
const SCREENSHOTS = Object.freeze({ asked: 'inputs-01-asked.png', failure: 'inputs-failure.png' });
const SECRET = 'probe-secret-8c41f2-do-not-log';
const INPUT_TITLE = 'MCP Tool Router: input "probe-token"';
const WORKBENCH_SETTINGS = Object.freeze({ 'git.openRepositoryInParentFolders': 'never', 'toolRouter.embeddings.offerPretrainedModel': false });

const log = (/** @type {string} */ line) => console.log(`[saved-inputs] ${line}`);

/** @param {string} folder */
async function writeWorkspace(folder) {
  const everything = path.join(REPO_ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
  if (!existsSync(everything)) throw new TestFailure(`${everything} is missing: run npm install`);
  const mcpJson = {
    inputs: [{ id: 'probe-token', type: 'promptString', description: 'Probe token', password: true }],
    servers: { probe: { command: 'node', args: [everything, 'stdio'], env: { PROBE_TOKEN: '${input:probe-token}' } } },
  };
  await mkdir(path.join(folder, '.vscode'), { recursive: true });
  await writeFile(path.join(folder, '.vscode', 'mcp.json'), `${JSON.stringify(mcpJson, null, 2)}\n`);
}

/** Every file under `dir` whose text holds `needle`. */
function filesHolding(dir, needle) {
  const hits = [];
  const walk = (d) => {
    for (const entry of readdirSync(d)) {
      const file = path.join(d, entry);
      const stat = statSync(file, { throwIfNoEntry: false });
      if (!stat) continue;
      if (stat.isDirectory()) walk(file);
      else if (stat.size < 20_000_000 && readFileSync(file).includes(needle)) hits.push(file);
    }
  };
  if (existsSync(dir)) walk(dir);
  return hits;
}

/**
 * @param {{ page: import('playwright-core').Page, url: string, workspace: string, run: { userDataDir: string, logsDir: string } }} context
 */
async function steps({ page, url, workspace, run }) {
  const widget = page.locator('.quick-input-widget');
  const input = widget.locator('.quick-input-box input');
  const asked = widget.locator('.quick-input-title', { hasText: INPUT_TITLE });
  const serverReady = page.locator('.statusbar-item', { hasText: /1\/1 · \d+ tools/ });

  // 1. The extension starts with the workspace and asks for the value: it is typed in once.
  await page.goto(url);
  await asked.waitFor({ timeout: 60_000 }).catch(() => {
    throw new TestFailure(`VS Code never asked for "probe-token" (expected a "${INPUT_TITLE}" input box)`);
  });
  await input.fill(SECRET);
  await page.screenshot({ path: path.join(ARTIFACTS_DIR, SCREENSHOTS.asked), animations: 'disabled' });
  await page.keyboard.press('Enter');
  await serverReady.waitFor({ timeout: 60_000 });
  log('asked once; the server started with the value');

  // 2. A reload starts the server again from SecretStorage, without asking.
  await page.reload();
  await serverReady.waitFor({ timeout: 60_000 });
  if (await asked.count()) throw new TestFailure('VS Code asked for "probe-token" again after a reload: the value was not kept');
  log('after a reload: started without asking');

  // 3. The value is in no file of the workspace, the settings or the logs.
  const hits = [...filesHolding(workspace, SECRET), ...filesHolding(path.join(run.userDataDir, 'User'), SECRET), ...filesHolding(run.logsDir, SECRET), ...filesHolding(path.join(run.userDataDir, 'logs'), SECRET)];
  if (hits.length > 0) throw new TestFailure(`the value was written to ${hits.map((h) => path.relative(REPO_ROOT, h)).join(', ')}`);
  log('the value is in no workspace, settings or log file');

  // 4. Clear Saved Inputs forgets it: after a reload VS Code asks again.
  await page.keyboard.press('F1');
  await input.fill('>Tool Router: Clear Saved Inputs');
  await widget.locator('.quick-input-list .monaco-list-row', { hasText: 'Clear Saved Inputs' }).first().waitFor({ timeout: 15_000 });
  await page.keyboard.press('Enter');
  await page.locator('.notification-toast', { hasText: /Cleared 1 saved input/ }).waitFor({ timeout: 15_000 });
  await page.reload();
  await asked.waitFor({ timeout: 60_000 }).catch(() => {
    throw new TestFailure('after Clear Saved Inputs and a reload, VS Code did not ask for "probe-token" again');
  });
  await page.keyboard.press('Escape');
  log('after Clear Saved Inputs: asked again');
}

process.exit(
  await runBrowserTest({
    label: 'saved-inputs',
    log,
    screenshots: SCREENSHOTS,
    writeWorkspace,
    settings: WORKBENCH_SETTINGS,
    steps,
  }),
);
