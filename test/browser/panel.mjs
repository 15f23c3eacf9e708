#!/usr/bin/env node
// @ts-check
/* global window, document -- only inside frame.evaluate callbacks, which run in the panel */
/**
 * Browser end-to-end test of the Tool Router panel, in a real VS Code (code-server, offline) driven by
 * headless Chromium, with the packaged VSIX installed the way a user installs it:
 *
 *   1. builds the VSIX (`npm run package`) unless VSIX=path names one, and packs two test-only VSIXs:
 *      the FAKE scripted model (test/extension/fakeModelProvider) and the panel test driver
 *      (test/browser/panelDriver), whose palette commands run one scripted `@router` turn or send the
 *      panel its cost update at once;
 *   2. opens a workspace whose .vscode/mcp.json starts server-everything and server-memory over stdio;
 *   3. opens the panel with "Tool Router: Show Tool Router Panel";
 *   4. explains a prompt from the panel with the keyboard and sees chosen tools with score bars and
 *      reasons, and how a typo in it was read; the focus stays on Explain, with a visible ring;
 *   5. runs a scripted turn and sees its selection and call;
 *   6. runs a scripted loop and sees the LOOP_DETECTED warning;
 *   7. sends the minute's cost update (the driver) and sees the focus and an opened section kept;
 *   8. in Light Modern, Dark Modern and both high-contrast themes: no axe-core violations, a visible
 *      focus ring and visible bar tracks;
 *   9. sets toolRouter.cost.hourlyTokenCap to 100 in the workspace settings, runs a turn, sees one paused
 *      alert that a cost update leaves alone, presses Resume from the keyboard and sees it running
 *      again with the focus kept;
 *  10. explains again, sees a near miss under "Not sent" with its reason, pins it, and sees the workspace
 *      setting toolRouter.selection.coreTools gain it and the next explanation send it as a core tool.
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
import { THEMES, axeViolations, checkBarTrack, checkFocusRing, describeViolations, mergeWorkspaceSettings, panelFrame, readWorkspaceSettings, useTheme } from './panelAccessSteps.mjs';

const ARTIFACTS_DIR = path.join(REPO_ROOT, 'test-artifacts', 'browser');
const SCREENSHOTS = Object.freeze({
  open: 'panel-01-open.png',
  explain: 'panel-02-explain.png',
  turn: 'panel-03-turn.png',
  loop: 'panel-04-loop.png',
  paused: 'panel-05-paused.png',
  resumed: 'panel-06-resumed.png',
  'theme-light': 'panel-07-theme-light.png',
  'theme-dark': 'panel-07-theme-dark.png',
  'theme-hc-dark': 'panel-07-theme-hc-dark.png',
  'theme-hc-light': 'panel-07-theme-hc-light.png',
  notSent: 'panel-08-not-sent.png',
  failure: 'panel-failure.png',
});
// Written among the artifacts; copy it to media/screenshot-panel.png by hand to update the README, so a test run never dirties the tree.
const README_SCREENSHOT = path.join(REPO_ROOT, 'test-artifacts', 'browser', 'panel-readme.png');

const SHOW_PANEL_TITLE = 'Tool Router: Show Tool Router Panel';
const ECHO_TURN_TITLE = 'Panel Test: Run Echo Turn';
const LOOP_TURN_TITLE = 'Panel Test: Run Loop Turn';
const COST_TICK_TITLE = 'Panel Test: Send Cost Tick';
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
 * What every step uses: the page, the workspace folder, the panel's document, and three helpers.
 * @typedef {object} PanelTest
 * @property {import('playwright-core').Page} page
 * @property {string} workspace
 * @property {import('playwright-core').FrameLocator} panel
 * @property {(title: string) => Promise<void>} runCommand
 * @property {(what: string, check: () => Promise<string | undefined>, timeoutMs: number) => Promise<string>} waitFor
 * @property {(which: keyof typeof SCREENSHOTS, part?: import('playwright-core').Locator) => Promise<void>} screenshot
 */

/**
 * @param {import('playwright-core').Page} page
 * @param {string} workspace
 * @returns {PanelTest}
 */
function panelTest(page, workspace) {
  const widget = page.locator('.quick-input-widget');
  const input = widget.locator('.quick-input-box input');
  const rows = widget.locator('.quick-input-list .monaco-list-row');
  // The webview: an iframe (the host) holding the active frame with our document.
  const panel = page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
  return {
    page,
    workspace,
    panel,
    /** Runs a palette command, reopening the palette until the row shows (see ui-smoke.mjs). */
    runCommand: async (title) => {
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
    },
    /** Polls until `check` returns a string (success note) or the timeout passes. */
    waitFor: async (what, check, timeoutMs) => {
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
    },
    screenshot: async (which, part) => {
      const file = path.join(ARTIFACTS_DIR, SCREENSHOTS[which]);
      await (part ?? page).screenshot({ path: file, animations: 'disabled' });
      log(`screenshot test-artifacts/browser/${SCREENSHOTS[which]}`);
    },
  };
}

/**
 * @param {import('playwright-core').Page} page
 * @param {string} workspace
 */
async function panelSteps(page, workspace) {
  const t = panelTest(page, workspace);
  await page.goto(page.url());
  await page.locator('.monaco-workbench').waitFor({ timeout: WORKBENCH_TIMEOUT_MS });
  log('workbench visible');
  await openPanel(t);
  await explainStep(t);
  await turnSteps(t);
  await updatesKeepFocus(t);
  await themeSteps(t);
  await pauseSteps(t);
  // Last, because it needs the selector's near misses (see the report if it fails for want of them).
  await nearMissSteps(t);
}

/** 1. Open the panel: in the secondary side bar, with both servers ready. @param {PanelTest} t */
async function openPanel({ page, panel, runCommand, waitFor, screenshot }) {
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
  // One small status line for news; the rest of the panel is not a live region.
  const live = await (await panelFrame(page)).evaluate(() => [document.querySelectorAll('[aria-live]').length, document.querySelectorAll('[role="status"]').length]);
  if (live[0] !== 0 || live[1] !== 1) throw new TestFailure(`the panel should have one role=status line and no aria-live regions; it has ${live[1]} and ${live[0]}`);
  await roomForThePanel(page);
  await screenshot('open');
}

/**
 * 2. Explain a prompt with the keyboard: chosen tools with a score and a reason each; the focus stays on
 * the Explain button, and its ring shows.
 * @param {PanelTest} t
 */
async function explainStep({ page, panel, waitFor, screenshot }) {
  await panel.locator('#explain-input').fill(EXPLAIN_PROMPT);
  await panel.locator('#explain-input').press('Tab');
  await page.keyboard.press('Enter');
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
      await panel.locator('#explain-button').press('Enter');
      return undefined;
    }
    const readAs = await panel.locator('#selection-read-as').innerText({ timeout: 1000 });
    if (!readAs.includes('"knowlege" as "knowledge"')) throw new Error(`the panel should say how it read the typo, but shows "${readAs}"`);
    return `${names.length} tools, first ${names[0]} (${scores[0]}: ${reasons[0]}), method ${method}; ${readAs}`;
  }, PANEL_TIMEOUT_MS);
  log(`explained: ${explained}`);
  const frame = await panelFrame(page);
  const focused = await frame.evaluate(() => document.activeElement?.id ?? '');
  if (focused !== 'explain-button') throw new TestFailure(`after Explain the focus should stay on the Explain button; it is on "${focused || 'the page'}"`);
  const status = await panel.locator('#status').innerText();
  if (!/^Explained: \d+ tools? chosen/.test(status)) throw new TestFailure(`the status line should announce the explanation; it says "${status}"`);
  log(`focus kept on the Explain button; status "${status}"; ring ${await checkFocusRing(frame)}`);
  await screenshot('explain');
}

/** 3–4. A scripted turn (its selection and call), then a scripted loop (the warning). @param {PanelTest} t */
async function turnSteps({ page, panel, runCommand, waitFor, screenshot }) {
  await runCommand(ECHO_TURN_TITLE);
  const turn = await waitFor('the turn in the panel', async () => {
    const body = await panel.locator('#selection-body').innerText({ timeout: 1000 });
    return /Turn 1/.test(body) && /everything_echo\s*ok/.test(body) ? body.split('\n')[0] : undefined;
  }, TURN_TIMEOUT_MS);
  log(`turn shown: ${turn}`);
  await screenshot('turn');

  // The fourth identical call is refused, and the warning says why.
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
}

/**
 * Sends the minute's cost update (the driver's command; it lands 3 s later), runs `meanwhile` (which puts
 * the focus back in the panel: the palette took it), and waits until the panel shows the new total.
 * @param {PanelTest} t  @param {() => Promise<void>} meanwhile
 */
async function costTick({ panel, runCommand, waitFor }, meanwhile) {
  const before = await panel.locator('#cost-total').innerText();
  await runCommand(COST_TICK_TITLE);
  await meanwhile();
  if ((await panel.locator('#cost-total').innerText()) !== before) throw new TestFailure('the cost update landed before the test was ready; make the driver\'s TICK_DELAY_MS longer');
  return waitFor('the cost update in the panel', async () => {
    const after = await panel.locator('#cost-total').innerText({ timeout: 1000 });
    return after !== before ? after : undefined;
  }, 15_000);
}

/**
 * 5. The minute's cost update changes the numbers in place: the focused control keeps the focus and
 * an opened section stays open (the same elements, not copies).
 * @param {PanelTest} t
 */
async function updatesKeepFocus(t) {
  const { page, panel } = t;
  await panel.locator('#stage-timings summary').click();
  const frame = await panelFrame(page);
  const total = await costTick(t, async () => {
    await panel.locator('section#servers button[data-action="showServerLog"]').first().focus();
    await frame.evaluate(() => {
      const w = /** @type {any} -- marks kept on the page between evaluations */ (window);
      w.focusMark = document.activeElement;
      w.timingsMark = document.getElementById('stage-timings');
    });
  });
  const kept = await frame.evaluate(() => {
    const w = /** @type {any} */ (window);
    const on = `${document.activeElement?.tagName} "${document.activeElement?.textContent?.slice(0, 40)}"`;
    return { focus: document.activeElement === w.focusMark, connected: w.focusMark?.isConnected === true, open: w.timingsMark?.isConnected === true && w.timingsMark.open === true, on };
  });
  if (!kept.focus) throw new TestFailure(`the cost update took the focus from the server's Log button (now on ${kept.on}; the button is ${kept.connected ? 'still' : 'no longer'} on the page)`);
  if (!kept.open) throw new TestFailure('the cost update closed (or replaced) the opened "Stage timings" section');
  log(`cost update "${total}" kept the focus on a Log button and "Stage timings" open`);
}

/**
 * 6. In each of four themes: no axe-core violations, a visible focus ring, visible bar tracks.
 * @param {PanelTest} t
 */
async function themeSteps(t) {
  const { page, panel, workspace } = t;
  const problems = [];
  for (const theme of THEMES) {
    await useTheme(page, workspace, theme);
    const frame = await panelFrame(page);
    await panel.locator('#explain-input').press('Tab');
    /** @param {Error} e */
    const noted = (e) => {
      problems.push(`${theme.id}: ${e.message}`);
      return 'NOT visible';
    };
    const ring = await checkFocusRing(frame).catch(noted);
    const track = await checkBarTrack(frame).catch(noted);
    const violations = await axeViolations(frame);
    if (violations.length) problems.push(`${theme.id}: ${violations.length} axe-core violation(s)\n${describeViolations(violations)}`);
    await t.screenshot(/** @type {keyof typeof SCREENSHOTS} */ (`theme-${theme.slug}`), page.locator('.part.auxiliarybar'));
    log(`${theme.id}: ${violations.length} axe-core violations; focus ring ${ring}; bar track ${track}`);
  }
  await useTheme(page, workspace, THEMES[0]);
  if (problems.length) throw new TestFailure(`accessibility problems:\n${problems.join('\n')}`);
}

/**
 * 7. Over the cap: one paused alert, kept (not re-created) through a cost update; Resume from the
 * keyboard keeps the focus and says the router runs again.
 * @param {PanelTest} t
 */
async function pauseSteps(t) {
  const { page, panel, workspace, runCommand, waitFor, screenshot } = t;
  await mergeWorkspaceSettings(workspace, { 'toolRouter.cost.hourlyTokenCap': TINY_CAP });
  await waitFor('the new cap in the panel', async () => {
    const text = await panel.locator('#cost-total').innerText({ timeout: 1000 });
    return text.includes(`of the ${TINY_CAP} cap`) ? text : undefined;
  }, 30_000);
  await runCommand(ECHO_TURN_TITLE);
  const paused = await waitFor('the paused state', async () => {
    const box = panel.locator('#cost-paused');
    if (!(await box.count())) return undefined;
    const available = (await panel.locator('#resume-button').getAttribute('aria-disabled')) !== 'true';
    return available ? (await box.innerText()).replace(/\s+/g, ' ') : undefined;
  }, TURN_TIMEOUT_MS);
  log(`paused: ${paused.slice(0, 160)}`);
  const frame = await panelFrame(page);
  await frame.evaluate(() => void (/** @type {any} */ (window).alertMark = document.getElementById('cost-paused')));
  await costTick(t, async () => undefined);
  const alerts = await frame.evaluate(() => ({ same: document.getElementById('cost-paused') === /** @type {any} */ (window).alertMark, count: document.querySelectorAll('[role="alert"]').length }));
  if (!alerts.same || alerts.count !== 1) throw new TestFailure(`the paused alert should be created once per pause; after a cost update it is ${alerts.same ? 'the same' : 'a new'} element, and there are ${alerts.count} alerts`);
  log('the paused alert survived a cost update unchanged');
  await panel.locator('section#cost').scrollIntoViewIfNeeded();
  await screenshot('paused');
  await panel.locator('#resume-button').press('Enter');
  await waitFor('the running state after Resume', async () => ((await panel.locator('#cost-running').count()) && !(await panel.locator('#cost-paused').count()) ? 'ok' : undefined), 15_000);
  const focused = await frame.evaluate(() => document.activeElement?.id ?? '');
  if (focused !== 'resume-button') throw new TestFailure(`after Resume the focus should stay on the Resume button; it is on "${focused || 'the page'}"`);
  const status = await waitFor('the status line after Resume', async () => {
    const text = await panel.locator('#status').innerText();
    return /Running again/.test(text) ? text : undefined;
  }, 5000);
  log(`resumed from the panel with the keyboard; focus kept; status "${status}"`);
  await screenshot('resumed');
}

/**
 * 8. The explained prompt's "Not sent" list: a near miss with its score and reason; Pin writes it to the
 * workspace's core tools, the status line says so, and explaining again sends it as a core tool.
 * @param {PanelTest} t
 */
async function nearMissSteps(t) {
  const { page, panel, workspace, waitFor, screenshot } = t;
  await panel.locator('#explain-input').fill(EXPLAIN_PROMPT);
  await panel.locator('#explain-input').press('Enter');
  const row = panel.locator('#near-misses .near-miss-row').filter({ has: panel.locator('button[data-action="pin"]') }).first();
  const miss = await waitFor('a near miss in "Not sent"', async () => {
    const prompt = await panel.locator('#selection-body .prompt').innerText({ timeout: 1000 });
    if (!prompt.includes(EXPLAIN_PROMPT) || !(await row.count())) return undefined;
    const [name, why, score, reason] = await Promise.all(['.tool-name', '.chip', '.score', '.tool-reason'].map((s) => row.locator(s).first().innerText()));
    if (!reason?.trim() || !/(cosine|score) -?\d/.test(score ?? '')) throw new Error(`the near miss ${name} should show a score and a reason; it shows "${score}" and "${reason}"`);
    return JSON.stringify({ name, why, score, reason });
  }, 30_000);
  const { name } = JSON.parse(miss);
  log(`near miss: ${miss}`);
  await row.locator('button[data-action="pin"]').press('Enter');
  const status = await waitFor('the pin confirmed in the status line', async () => {
    const text = await panel.locator('#status').innerText();
    return text.startsWith(`Pinned ${name}:`) ? text : undefined;
  }, 15_000);
  const pinned = await waitFor('the tool in the workspace setting', async () => {
    const core = (await readWorkspaceSettings(workspace))['toolRouter.selection.coreTools'];
    return Array.isArray(core) && core.includes(name) ? JSON.stringify(core) : undefined;
  }, 15_000);
  log(`pinned: "${status}"; toolRouter.selection.coreTools = ${pinned}`);
  await screenshot('notSent', page.locator('.part.auxiliarybar'));
  const violations = await axeViolations(await panelFrame(page));
  if (violations.length) throw new TestFailure(`axe-core violations with "Not sent" shown:\n${describeViolations(violations)}`);
  // The selection engine reloads on the settings change; explain again until the pin shows as a core tool.
  let asked = 0;
  const core = await waitFor(`${name} sent as a core tool`, async () => {
    if (asked++ % 12 === 0) await panel.locator('#explain-button').press('Enter');
    const chosen = panel.locator('.tool-row').filter({ has: panel.locator('.tool-name', { hasText: name }) });
    const text = (await chosen.count()) ? await chosen.first().innerText() : '';
    return /\bcore\b/.test(text) ? text.replace(/\s+/g, ' ') : undefined;
  }, PANEL_TIMEOUT_MS);
  log(`after the pin: ${core.slice(0, 160)}`);
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
