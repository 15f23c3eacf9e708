#!/usr/bin/env node
// @ts-check
/**
 * Browser end-to-end test of the Tool Router panel, in a real VS Code (code-server, offline) driven by
 * headless Chromium, with the packaged VSIX installed the way a user installs it:
 *
 *   1. builds the VSIX (`npm run package`) unless VSIX=path names one, and packs two test-only VSIXs:
 *      the FAKE scripted model (test/extension/fakeModelProvider) and the panel test driver
 *      (test/browser/panelDriver), whose palette commands run one scripted `@router` turn;
 *   2. opens a workspace whose .vscode/mcp.json starts server-everything and server-memory over stdio;
 *   3. opens the panel with "Tool Router: Show Tool Router Panel";
 *   4. explains a prompt from the panel and sees chosen tools with score bars and reasons, and how a typo
 *      in it was read;
 *   5. runs a scripted turn and sees its selection and call;
 *   6. runs a scripted loop and sees the LOOP_DETECTED warning;
 *   7. sets toolRouter.cost.hourlyTokenCap to 100 in the workspace settings, runs a turn, sees the
 *      paused state, presses Resume in the panel and sees it running again.
 *
 * The chat view of code-server offers no model without a Copilot sign-in, so `@router …` cannot be typed
 * into it; the turns go through the participant's handler from the driver instead (as in the
 * extension-host chat tests). Screenshots: test-artifacts/browser/panel-*.png; the loop state is also
 * saved as test-artifacts/browser/panel-readme.png (the README's media/screenshot-panel.png is a copy).
 *
 *   node test/browser/panel.mjs     exit 0: passed; 1: failed (the reason is printed)
 */
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../../scripts/vscode-host/code-server-host.mjs';
import { TestFailure, runBrowserTest, vsixToTest } from './browserTestSupport.mjs';

const ARTIFACTS_DIR = path.join(REPO_ROOT, 'test-artifacts', 'browser');
const SCREENSHOTS = Object.freeze({
  open: 'panel-01-open.png',
  explain: 'panel-02-explain.png',
  turn: 'panel-03-turn.png',
  loop: 'panel-04-loop.png',
  paused: 'panel-05-paused.png',
  resumed: 'panel-06-resumed.png',
  failure: 'panel-failure.png',
});
// Written among the artifacts; copy it to media/screenshot-panel.png by hand to update the README, so a test run never dirties the tree.
const README_SCREENSHOT = path.join(REPO_ROOT, 'test-artifacts', 'browser', 'panel-readme.png');

const SHOW_PANEL_TITLE = 'Tool Router: Show Tool Router Panel';
const ECHO_TURN_TITLE = 'Panel Test: Run Echo Turn';
const LOOP_TURN_TITLE = 'Panel Test: Run Loop Turn';
/** "knowlege" is a typo on purpose: the panel must say it read it as "knowledge" (spelling tolerance, from the VSIX's word lists). */
const EXPLAIN_PROMPT = 'remember that Alice works at Acme and add it to the knowlege graph';
/** A cap the first turn's tokens cross at once (the fake model counts chars / 4). */
const TINY_CAP = 100;

const WORKBENCH_TIMEOUT_MS = 60_000;
const PALETTE_ROW_TIMEOUT_MS = 3_000;
/** Activation, both servers and the first selection (the embedding model loads in the background). */
const PANEL_TIMEOUT_MS = 120_000;
/** A scripted turn is a few routed calls; the first one also waits for the servers. */
const TURN_TIMEOUT_MS = 90_000;
const POLL_MS = 250;
const WORKBENCH_SETTINGS = Object.freeze({
  'git.openRepositoryInParentFolders': 'never',
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  // The first-run offer of a pretrained model is a notification 15 s after start; these steps do not need it.
  'toolRouter.embeddings.offerPretrainedModel': false,
  'chat.commandCenter.enabled': false,
});

const startedAt = Date.now();
/** @param {string} message */
const log = (message) => process.stdout.write(`[panel-e2e] ${((Date.now() - startedAt) / 1000).toFixed(1).padStart(5)} s  ${message}\n`);
/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));


/**
 * Packs a test-only extension folder (no dependencies) as a VSIX into the run folder, as scripts/test-extension.mjs does.
 * @param {string} folder  @param {string} out
 */
function packTestExtension(folder, out) {
  execFileSync(process.execPath, [path.join(REPO_ROOT, 'node_modules/@vscode/vsce/vsce'), 'package', '--allow-missing-repository', '--skip-license', '--no-dependencies', '--out', out], { cwd: folder, stdio: ['ignore', 'ignore', 'inherit'] });
  return out;
}

/** @param {string} folder */
async function writeWorkspace(folder) {
  const nm = path.join(REPO_ROOT, 'node_modules', '@modelcontextprotocol');
  const everything = path.join(nm, 'server-everything', 'dist', 'index.js');
  const memory = path.join(nm, 'server-memory', 'dist', 'index.js');
  for (const f of [everything, memory]) if (!existsSync(f)) throw new TestFailure(`${f} is missing: run npm install`);
  const mcpJson = {
    servers: {
      everything: { type: 'stdio', command: 'node', args: [everything, 'stdio'] },
      memory: { type: 'stdio', command: 'node', args: [memory], env: { MEMORY_FILE_PATH: path.join(folder, 'memory.jsonl') } },
    },
  };
  await mkdir(path.join(folder, '.vscode'), { recursive: true });
  await writeFile(path.join(folder, '.vscode', 'mcp.json'), `${JSON.stringify(mcpJson, null, 2)}\n`);
}

/**
 * @param {import('playwright-core').Page} page
 * @param {string} workspace
 */
async function panelSteps(page, workspace) {
  /** @param {keyof typeof SCREENSHOTS} which */
  const screenshot = async (which) => {
    await page.screenshot({ path: path.join(ARTIFACTS_DIR, SCREENSHOTS[which]), animations: 'disabled' });
    log(`screenshot test-artifacts/browser/${SCREENSHOTS[which]}`);
  };
  const widget = page.locator('.quick-input-widget');
  const input = widget.locator('.quick-input-box input');
  const rows = widget.locator('.quick-input-list .monaco-list-row');
  /** Runs a palette command, reopening the palette until the row shows (see ui-smoke.mjs). @param {string} title */
  const runCommand = async (title) => {
    const deadline = Date.now() + PANEL_TIMEOUT_MS;
    while (Date.now() < deadline) {
      await page.keyboard.press('F1');
      await input.fill(`>${title}`);
      const row = rows.filter({ hasText: title }).first();
      if (await row.waitFor({ timeout: PALETTE_ROW_TIMEOUT_MS }).then(() => true, () => false)) {
        await row.click();
        log(`ran "${title}"`);
        return;
      }
      await page.keyboard.press('Escape');
    }
    throw new TestFailure(`the palette never listed "${title}"`);
  };
  // The webview: an iframe (the host) holding the active frame with our document.
  const panel = page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
  /**
   * Polls until `check` returns a string (success note) or the timeout passes.
   * @param {string} what  @param {() => Promise<string | undefined>} check  @param {number} timeoutMs
   */
  const waitFor = async (what, check, timeoutMs) => {
    let last = '';
    for (const until = Date.now() + timeoutMs; Date.now() < until; await sleep(POLL_MS)) {
      const note = await check().catch((/** @type {Error} */ e) => {
        last = e.message.split('\n')[0] ?? '';
        return undefined;
      });
      if (note !== undefined) return note;
    }
    const text = await panel.locator('#app').innerText({ timeout: 1000 }).catch(() => '(panel not readable)');
    throw new TestFailure(`${what} did not happen within ${timeoutMs / 1000} s${last ? ` (${last})` : ''}; the panel shows:\n${text.slice(0, 1500)}`);
  };

  await page.goto(page.url());
  await page.locator('.monaco-workbench').waitFor({ timeout: WORKBENCH_TIMEOUT_MS });
  log('workbench visible');

  // 1. Open the panel.
  await runCommand(SHOW_PANEL_TITLE);
  await waitFor('the panel showing its four sections', async () => ((await panel.locator('section#selection').count()) && (await panel.locator('section#servers').count()) ? 'ok' : undefined), PANEL_TIMEOUT_MS);
  await waitFor('both servers ready in the panel', async () => {
    const text = await panel.locator('section#servers').innerText({ timeout: 1000 });
    return /everything\s*ready/.test(text) && /memory\s*ready/.test(text) ? text : undefined;
  }, PANEL_TIMEOUT_MS);
  log('panel open; both servers ready');
  // The panel lives in the secondary side bar (beside the chat), not under the server tree. Webviews are
  // drawn in an overlay, so the view's title tells where it is.
  const secondary = await page.locator('.part.auxiliarybar').innerText({ timeout: 5000 }).catch(() => '');
  const primary = await page.locator('.part.sidebar').innerText({ timeout: 5000 }).catch(() => '');
  if (!/Tool Router Panel/i.test(secondary) || /Tool Router Panel/i.test(primary)) throw new TestFailure(`the panel should be in the secondary side bar; it shows:\n${secondary.slice(0, 300)}\nand the primary side bar:\n${primary.slice(0, 300)}`);
  log(`the panel is in the secondary side bar${/\bChat\b/.test(secondary) ? ', beside the chat' : ''}`);
  await roomForThePanel(page);
  await screenshot('open');

  // 2. Explain a prompt: chosen tools with a score and a reason each.
  await panel.locator('#explain-input').fill(EXPLAIN_PROMPT);
  await panel.locator('#explain-button').click();
  const explained = await waitFor('the explanation', async () => {
    const names = await panel.locator('.tool-row .tool-name').allInnerTexts();
    const prompt = await panel.locator('#selection-body .prompt').innerText({ timeout: 1000 });
    if (!prompt.includes(EXPLAIN_PROMPT) || !names.some((n) => n.startsWith('memory_'))) return undefined;
    const reasons = await panel.locator('.tool-row .tool-reason').allInnerTexts();
    const scores = await panel.locator('.tool-row .score').allInnerTexts();
    const bars = await panel.locator('.tool-row .bar').count();
    if (reasons.some((r) => !r.trim()) || !scores.some((s) => /(cosine|score) -?\d/.test(s)) || bars === 0) return undefined;
    // The installed VSIX must load onnxruntime (unpacked from its compressed copy) and the bundled model:
    // keyword-only selection fails the test. The first explanation may come before the model has loaded.
    const method = await panel.locator('#selection-method').innerText();
    if (!/embedding\+keyword/.test(method)) {
      await panel.locator('#explain-button').click();
      return undefined;
    }
    const readAs = await panel.locator('#selection-read-as').innerText({ timeout: 1000 });
    if (!readAs.includes('"knowlege" as "knowledge"')) throw new Error(`the panel should say how it read the typo, but shows "${readAs}"`);
    return `${names.length} tools, first ${names[0]} (${scores[0]}: ${reasons[0]}), method ${method}; ${readAs}`;
  }, PANEL_TIMEOUT_MS);
  log(`explained: ${explained}`);
  await screenshot('explain');

  // 3. A scripted @router turn: its selection and its call appear.
  await runCommand(ECHO_TURN_TITLE);
  const turn = await waitFor('the turn in the panel', async () => {
    const body = await panel.locator('#selection-body').innerText({ timeout: 1000 });
    return /Turn 1/.test(body) && /everything_echo\s*ok/.test(body) ? body.split('\n')[0] : undefined;
  }, TURN_TIMEOUT_MS);
  log(`turn shown: ${turn}`);
  await screenshot('turn');

  // 4. A scripted loop: the fourth identical call is refused, and the warning says why.
  await runCommand(LOOP_TURN_TITLE);
  const warning = await waitFor('the loop warning', async () => {
    const row = panel.locator('tr.warning-row.loop').first();
    if (!(await row.count())) return undefined;
    const text = await row.innerText();
    return /everything_echo/.test(text) && /LOOP_DETECTED/.test(text) && /again/.test(text) && /Do not repeat this call/.test(text) ? text.replace(/\s+/g, ' ') : undefined;
  }, TURN_TIMEOUT_MS);
  log(`loop warning: ${warning.slice(0, 160)}`);
  await screenshot('loop');
  // The README's picture: the secondary side bar alone (smaller, and the VSIX has a size budget).
  await page.locator('.part.auxiliarybar').screenshot({ path: README_SCREENSHOT, animations: 'disabled' });
  log(`saved ${path.relative(REPO_ROOT, README_SCREENSHOT)}`);

  // 5. Over the cap: paused, then Resume from the panel.
  await writeFile(path.join(workspace, '.vscode', 'settings.json'), `${JSON.stringify({ 'toolRouter.cost.hourlyTokenCap': TINY_CAP }, null, 2)}\n`);
  await waitFor('the new cap in the panel', async () => {
    const text = await panel.locator('#cost-total').innerText({ timeout: 1000 });
    return text.includes(`of the ${TINY_CAP} cap`) ? text : undefined;
  }, 30_000);
  await runCommand(ECHO_TURN_TITLE);
  const paused = await waitFor('the paused state', async () => {
    const box = panel.locator('#cost-paused');
    if (!(await box.count())) return undefined;
    const enabled = await panel.locator('#resume-button').isEnabled();
    return enabled ? (await box.innerText()).replace(/\s+/g, ' ') : undefined;
  }, TURN_TIMEOUT_MS);
  log(`paused: ${paused.slice(0, 160)}`);
  await panel.locator('section#cost').scrollIntoViewIfNeeded();
  await screenshot('paused');
  await panel.locator('#resume-button').click();
  await waitFor('the running state after Resume', async () => ((await panel.locator('#cost-running').count()) && !(await panel.locator('#cost-paused').count()) ? 'ok' : undefined), 15_000);
  log('resumed from the panel');
  await screenshot('resumed');
}

/**
 * Cosmetic, for readable screenshots: widens the secondary side bar the panel is in.
 * @param {import('playwright-core').Page} page
 */
async function roomForThePanel(page) {
  try {
    // The secondary side bar is on the right: its left edge is dragged further left to widen it.
    const bar = await page.locator('.part.auxiliarybar').boundingBox();
    if (bar) {
      const x = bar.x - 1;
      const y = bar.y + bar.height / 2;
      await page.mouse.move(x, y);
      await page.mouse.down();
      await page.mouse.move(x - 300, y, { steps: 5 });
      await page.mouse.up();
    }
  } catch (error) {
    log(`could not make room for the panel (screenshots only): ${/** @type {Error} */ (error).message.split('\n')[0]}`);
  }
}

process.exit(
  await runBrowserTest({
    label: 'panel',
    log,
    artifactsDir: ARTIFACTS_DIR,
    screenshots: SCREENSHOTS,
    // The router, the FAKE scripted model and the test-only panel driver.
    vsixes: async (run) => [
      await vsixToTest(run, log),
      packTestExtension(path.join(REPO_ROOT, 'test/extension/fakeModelProvider'), path.join(run.dir, 'fake-model.vsix')),
      packTestExtension(path.join(REPO_ROOT, 'test/browser/panelDriver'), path.join(run.dir, 'panel-driver.vsix')),
    ],
    writeWorkspace,
    settings: WORKBENCH_SETTINGS,
    viewport: { width: 1400, height: 1000 },
    steps: async ({ page, url, workspace }) => {
      await page.goto(url);
      await panelSteps(page, workspace);
    },
  }),
);
