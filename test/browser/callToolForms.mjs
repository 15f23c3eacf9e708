#!/usr/bin/env node
// @ts-check
/**
 * Call Tool's argument forms in the installed VSIX, as a person fills them in (test/fixtures/servers/
 * formsServer.mjs behind it): an enum pick, a boolean pick and a number that is first mistyped; a nested
 * object in the JSON editor, first with a wrong value (its diagnostic shows at the value), then fixed;
 * and a destructive tool's confirmation.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { REPO_ROOT } from '../../scripts/vscode-host/code-server-host.mjs';
import { TestFailure, runBrowserTest } from './browserTestSupport.mjs';

const ARTIFACTS_DIR = path.join(REPO_ROOT, 'test-artifacts', 'browser');
const SCREENSHOTS = Object.freeze({ number: 'forms-01-number-error.png', json: 'forms-02-json-diagnostic.png', confirm: 'forms-03-destructive.png', failure: 'forms-failure.png' });
const WORKBENCH_SETTINGS = Object.freeze({ 'git.openRepositoryInParentFolders': 'never', 'workbench.secondarySideBar.defaultVisibility': 'hidden', 'toolRouter.embeddings.offerPretrainedModel': false });
const STEP_TIMEOUT_MS = 30_000;

const log = (/** @type {string} */ line) => console.log(`[call-tool-forms] ${line}`);
const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));

/** @param {string} folder */
async function writeWorkspace(folder) {
  const server = { command: 'node', args: [path.join(REPO_ROOT, 'test/fixtures/servers/formsServer.mjs')] };
  await mkdir(path.join(folder, '.vscode'), { recursive: true });
  await writeFile(path.join(folder, '.vscode', 'mcp.json'), `${JSON.stringify({ servers: { forms: server } }, null, 2)}\n`);
}

/** @param {{ page: import('playwright-core').Page, url: string }} context */
async function steps({ page, url }) {
  const widget = page.locator('.quick-input-widget');
  const input = widget.locator('.quick-input-box input');
  const title = widget.locator('.quick-input-title');
  const rows = widget.locator('.quick-input-list .monaco-list-row');
  const shot = (/** @type {keyof typeof SCREENSHOTS} */ which) => page.screenshot({ path: path.join(ARTIFACTS_DIR, SCREENSHOTS[which]), animations: 'disabled' });
  const resultShows = async (/** @type {RegExp} */ pattern, /** @type {string} */ what) => {
    for (const until = Date.now() + STEP_TIMEOUT_MS; Date.now() < until; await sleep(250)) {
      const texts = (await page.locator('.editor-instance .monaco-editor[data-uri^="tool-router-result:"] .view-lines').allInnerTexts()).map((t) => t.replace(/\u00a0/g, ' '));
      if (texts.some((t) => pattern.test(t.replace(/\s+/g, ' ')))) return;
    }
    throw new TestFailure(`no result editor showed ${what} (${pattern})`);
  };

  /** Palette → Call Tool… → the tool, retried until the extension has started the server. */
  const pickTool = async (/** @type {string} */ tool) => {
    for (const until = Date.now() + 120_000; Date.now() < until; ) {
      await page.keyboard.press('F1');
      await input.fill('>Tool Router: Call Tool');
      const command = rows.filter({ hasText: 'Tool Router: Call Tool…' }).first();
      if (!(await command.waitFor({ timeout: 3000 }).then(() => true, () => false))) {
        await page.keyboard.press('Escape');
        continue;
      }
      await command.click();
      await title.filter({ hasText: 'Call an MCP tool' }).waitFor({ timeout: STEP_TIMEOUT_MS });
      await input.fill(tool);
      const row = rows.filter({ hasText: tool }).first();
      if (await row.waitFor({ timeout: 10_000 }).then(() => true, () => false)) {
        await row.click();
        return;
      }
      await page.keyboard.press('Escape');
    }
    throw new TestFailure(`Call Tool never offered ${tool}`);
  };
  const pickRow = async (/** @type {string} */ fieldTitle, /** @type {string} */ label) => {
    await title.filter({ hasText: fieldTitle }).waitFor({ timeout: STEP_TIMEOUT_MS });
    await rows.filter({ hasText: new RegExp(`^${label}`) }).first().click();
  };

  /** Replaces the editor's selection with `text` as a paste does (typing would trigger auto-closing). */
  const paste = async (/** @type {string} */ text) => {
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.evaluate((t) => navigator.clipboard.writeText(t), text);
    await page.keyboard.press('Control+V');
  };

  await page.goto(url);
  await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });

  // 1. Flat schema: an enum pick, a boolean pick, then a number, first mistyped.
  await pickTool('forms_order_pizza');
  await pickRow('forms_order_pizza (1/3): size', 'large');
  await pickRow('forms_order_pizza (2/3): extra_cheese', 'true');
  await title.filter({ hasText: 'forms_order_pizza (3/3): slices' }).waitFor({ timeout: STEP_TIMEOUT_MS });
  await input.fill('seven');
  const complaint = widget.locator('.quick-input-message', { hasText: /needs a number/ });
  await complaint.waitFor({ timeout: STEP_TIMEOUT_MS }).catch(() => {
    throw new TestFailure('typing "seven" for an integer field did not say it needs a number');
  });
  await shot('number');
  await input.fill('7');
  await page.keyboard.press('Enter');
  await resultShows(/order_pizza got \{\\"size\\":\\"large\\",\\"extra_cheese\\":true,\\"slices\\":7\}/, 'the picked and typed arguments');
  log('enum, boolean and number fields: large, true, 7 (after "seven" was refused)');

  // 2. Nested schema: the JSON editor, a wrong value shown where it is, then fixed.
  await pickTool('forms_set_alarm');
  const call = page.locator('.notification-toast', { hasText: 'Edit the arguments for forms_set_alarm' }).locator('a.monaco-button, .monaco-button', { hasText: /^Call$/ });
  await call.waitFor({ timeout: STEP_TIMEOUT_MS });
  const editor = page.locator('.editor-instance .monaco-editor').first();
  await editor.locator('.view-lines').click();
  await page.keyboard.press('Control+A');
  await paste('{"schedule": {"hour": 30}}');
  await call.click();
  // The check names the wrong value (an error notification) and marks it in the editor (a diagnostic).
  await page.locator('.notification-toast', { hasText: /hour.*23|23.*hour/i }).first().waitFor({ timeout: STEP_TIMEOUT_MS }).catch(() => {
    throw new TestFailure('an hour of 30 (maximum 23) was not reported');
  });
  await page.locator('.squiggly-error').first().waitFor({ timeout: STEP_TIMEOUT_MS }).catch(() => {
    throw new TestFailure('an hour of 30 (maximum 23) was not marked in the JSON editor');
  });
  await shot('json');
  await editor.locator('.view-lines').click();
  await page.keyboard.press('Control+A');
  await paste('{"schedule": {"hour": 7, "days": ["mon"]}}');
  const callAgain = page.locator('.notification-toast', { hasText: 'Edit the arguments for forms_set_alarm' }).locator('a.monaco-button, .monaco-button', { hasText: /^Call$/ });
  await callAgain.click();
  await resultShows(/set_alarm got \{\\"schedule\\":\{\\"hour\\":7,\\"days\\":\[\\"mon\\"\]\}\}/, 'the nested arguments');
  log('nested object: the wrong hour was marked, the fixed one was sent');

  // 3. A destructive tool asks first, naming it.
  await pickTool('forms_wipe_cache');
  const dialog = page.locator('.monaco-dialog-box', { hasText: /wipe_cache.*destructive/i });
  await dialog.waitFor({ timeout: STEP_TIMEOUT_MS }).catch(() => {
    throw new TestFailure('no confirmation appeared before the destructive tool ran');
  });
  await shot('confirm');
  await dialog.locator('.monaco-button', { hasText: /^Run$/ }).click();
  await resultShows(/wipe_cache got \{\}/, 'the destructive call after confirming');
  log('destructive tool: asked, confirmed, ran');
}

process.exit(
  await runBrowserTest({
    label: 'call-tool-forms',
    log,
    screenshots: SCREENSHOTS,
    writeWorkspace,
    settings: WORKBENCH_SETTINGS,
    steps,
  }),
);
