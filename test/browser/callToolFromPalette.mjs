#!/usr/bin/env node
// @ts-check
/**
 * Browser end-to-end test of "Tool Router: Call Tool…", in a real VS Code (code-server, offline)
 * driven by headless Chromium, with the packaged VSIX installed the way a user installs it:
 *
 *   1. builds the VSIX (`npm run package`), unless VSIX=path/to/file.vsix names one;
 *   2. writes a workspace whose .vscode/mcp.json starts server-everything over stdio,
 *      installs the VSIX into a fresh extensions folder and opens the workspace;
 *   3. runs the command from the palette (F1), picks `everything_echo`, types the message,
 *      and waits for the read-only result editor: `// everything_echo · ok · N ms · N bytes`
 *      on its first line and `Echo: hello from the palette` in the envelope.
 *
 * Screenshots of each step go to test-artifacts/browser/ (01-palette.png … 04-result.png, and
 * failure.png when a step fails). Everything else (workspace, user data, extensions, browser
 * profile, logs) stays in the harness's run folder under .cache/vscode-host/runs/.
 *
 *   node test/browser/callToolFromPalette.mjs     exit 0: passed; 1: failed (the reason is printed)
 *
 * Needs scripts/vscode-host/provision.sh to have run once (code-server, Node 24, Chromium).
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { REPO_ROOT } from '../../scripts/vscode-host/code-server-host.mjs';
import { TestFailure, runBrowserTest, vsixToTest } from './browserTestSupport.mjs';

const ARTIFACTS_DIR = path.join(REPO_ROOT, 'test-artifacts', 'browser');
const SCREENSHOTS = Object.freeze({
  palette: '01-palette.png',
  toolPick: '02-tool-pick.png',
  argument: '03-argument.png',
  result: '04-result.png',
  failure: 'failure.png',
});

/** The command's title as the palette shows it: category and title from package.nls.json. */
const COMMAND_TITLE = 'Tool Router: Call Tool…';
/** What is typed into the palette: without the ellipsis, which no one types. */
const COMMAND_FILTER = '>Tool Router: Call Tool';
/** The tool QuickPick's title (callToolCommand.ts, English l10n default). */
const TOOL_PICK_TITLE = 'Call an MCP tool';
const TOOL_NAME = 'everything_echo';
const MESSAGE = 'hello from the palette';
/** The envelope's text content, as server-everything's echo tool answers. */
const EXPECTED_TEXT = `Echo: ${MESSAGE}`;
/** The URI scheme of result documents (callToolCommand.ts RESULT_SCHEME): a read-only content provider. */
const RESULT_SCHEME = 'tool-router-result';
/** What Monaco says when someone types into a read-only editor. */
const READ_ONLY_MESSAGE = 'Cannot edit in read-only editor';
/** callToolCommand.ts: `// ${tool} · ${ok | error type} · ${latency.toFixed(1)} ms · ${bytes} bytes`. */
const FIRST_LINE = new RegExp(`^// ${TOOL_NAME} · ok · \\d+(?:\\.\\d+)? ms · \\d+ bytes$`);

/** Workbench visible after 2.5–4 s on 2 cores (harness README); the margin covers a loaded runner. */
const WORKBENCH_TIMEOUT_MS = 60_000;
/**
 * A palette opened before the extension's contributions are registered says "No matching commands"
 * and never refreshes, so it is reopened until the command shows (as in ui-smoke.mjs).
 */
const PALETTE_ROW_TIMEOUT_MS = 3_000;
/** From the first palette try until the tool list shows everything_echo: activation plus server start. */
const TOOL_LIST_TIMEOUT_MS = 120_000;
/** The extension answers a pick with the next prompt at once; this only covers a slow machine. */
const PROMPT_TIMEOUT_MS = 15_000;
/** The echo call itself takes milliseconds; opening the result editor a second or two. */
const RESULT_TIMEOUT_MS = 30_000;
const POLL_MS = 250;
/** How long the "Calling…" progress toast may linger after the result opened before the last screenshot. */
const PROGRESS_TOAST_GRACE_MS = 5_000;


/**
 * User settings over the harness's offline ones, so the screenshots show only what the test does:
 * the workspace lies inside this repository's .cache, and the git extension would ask about opening
 * the parent repository; the secondary side bar (Chat) would take a third of the window.
 */
const WORKBENCH_SETTINGS = Object.freeze({
  'git.openRepositoryInParentFolders': 'never',
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  // The first-run offer of a pretrained model is a notification 15 s after start; these steps do not need it.
  'toolRouter.embeddings.offerPretrainedModel': false,
});

const startedAt = Date.now();
/** @param {string} message */
const log = (message) => process.stdout.write(`[call-tool-e2e] ${((Date.now() - startedAt) / 1000).toFixed(1).padStart(5)} s  ${message}\n`);
/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/** Monaco renders spaces as U+00A0; compare text with plain spaces. */
const plain = (/** @type {string} */ text) => text.replace(/\u00a0/g, ' ');


/**
 * The demo workspace: one server, server-everything from this repository's node_modules, over stdio.
 * @param {string} folder
 */
async function writeWorkspace(folder) {
  const serverEntry = path.join(REPO_ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
  if (!existsSync(serverEntry)) throw new TestFailure(`${serverEntry} is missing: run npm install (server-everything is a devDependency)`);
  const mcpJson = { servers: { everything: { type: 'stdio', command: 'node', args: [serverEntry, 'stdio'] } } };
  await mkdir(path.join(folder, '.vscode'), { recursive: true });
  await writeFile(path.join(folder, '.vscode', 'mcp.json'), `${JSON.stringify(mcpJson, null, 2)}\n`);
}

/**
 * The steps in the browser. Each step waits for what the person would see, then saves a screenshot.
 * @param {import('playwright-core').Page} page
 * @param {string} url
 */
async function callToolFromPalette(page, url) {
  /** @param {keyof typeof SCREENSHOTS} which */
  const screenshot = async (which) => {
    // 'disabled' ends CSS transitions first: the QuickPick fades in, and would look greyed out.
    await page.screenshot({ path: path.join(ARTIFACTS_DIR, SCREENSHOTS[which]), animations: 'disabled' });
    log(`screenshot test-artifacts/browser/${SCREENSHOTS[which]}`);
  };
  const widget = page.locator('.quick-input-widget');
  const input = widget.locator('.quick-input-box input');
  const title = widget.locator('.quick-input-title');
  const rows = widget.locator('.quick-input-list .monaco-list-row');

  await page.goto(url);
  await page.locator('.monaco-workbench').waitFor({ timeout: WORKBENCH_TIMEOUT_MS });
  log('workbench visible');

  // Steps 1 and 2: palette → command → tool QuickPick listing everything_echo. The extension activates
  // when it sees .vscode/mcp.json and starts its servers in the background; the QuickPick fills in as
  // tools arrive. If the palette or the QuickPick is not there yet (or closes), start over.
  const toolRow = rows.filter({ hasText: TOOL_NAME }).first();
  const deadline = Date.now() + TOOL_LIST_TIMEOUT_MS;
  let lastSeen = 'the command palette never listed the command';
  let listed = false;
  for (let attempt = 1; !listed && Date.now() < deadline; attempt++) {
    await page.keyboard.press('F1');
    await input.fill(COMMAND_FILTER);
    const commandRow = rows.filter({ hasText: COMMAND_TITLE }).first();
    if (!(await commandRow.waitFor({ timeout: PALETTE_ROW_TIMEOUT_MS }).then(() => true, () => false))) {
      await page.keyboard.press('Escape');
      continue;
    }
    log(`palette lists "${COMMAND_TITLE}" (attempt ${attempt})`);
    await screenshot('palette');
    await commandRow.click();

    // The palette and the tool QuickPick share the widget: the title tells them apart.
    const pickShown = await title
      .filter({ hasText: TOOL_PICK_TITLE })
      .waitFor({ timeout: PROMPT_TIMEOUT_MS })
      .then(() => true, () => false);
    if (!pickShown) {
      lastSeen = `the command ran but no "${TOOL_PICK_TITLE}" QuickPick appeared (widget title: ${JSON.stringify(await textOf(title))})`;
      await page.keyboard.press('Escape');
      continue;
    }
    // Filtering keeps the row on screen whatever the list's order (the list is virtual).
    await input.fill(TOOL_NAME);
    while (Date.now() < deadline) {
      if (await toolRow.isVisible()) {
        listed = true;
        break;
      }
      if (!(await widget.isVisible()) || !(await title.filter({ hasText: TOOL_PICK_TITLE }).isVisible())) {
        lastSeen = 'the tool QuickPick closed before it listed the tool';
        break; // reopen from the palette
      }
      lastSeen = `the tool QuickPick showed rows ${JSON.stringify(await rows.allInnerTexts())} (placeholder: ${JSON.stringify(await input.getAttribute('placeholder'))})`;
      await sleep(POLL_MS);
    }
  }
  if (!listed) {
    // The extension's status bar entry says how many servers are ready, e.g. "0/1 · 0 tools".
    const status = await textOf(page.locator('.statusbar-item', { hasText: /\d+\/\d+ · \d+ tools?/ }));
    throw new TestFailure(`"${TOOL_NAME}" was not offered within ${TOOL_LIST_TIMEOUT_MS / 1000} s: ${lastSeen}; status bar: ${JSON.stringify(status.trim())}`);
  }
  log(`the tool QuickPick lists ${TOOL_NAME}`);
  await screenshot('toolPick');
  await toolRow.click();

  // Step 3: the flat schema of echo is asked field by field: one input box, `everything_echo (1/1): message *`.
  const argumentTitle = title.filter({ hasText: `${TOOL_NAME} (1/1): message` });
  await argumentTitle.waitFor({ timeout: PROMPT_TIMEOUT_MS }).catch(async () => {
    throw new TestFailure(`no input box for the "message" argument appeared (widget title: ${JSON.stringify(await textOf(title))})`);
  });
  await input.fill(MESSAGE);
  const typed = await input.inputValue();
  if (typed !== MESSAGE) throw new TestFailure(`the input box holds ${JSON.stringify(typed)}, not ${JSON.stringify(MESSAGE)}`);
  log(`typed the message into "${await textOf(argumentTitle)}"`);
  await screenshot('argument');
  await page.keyboard.press('Enter');

  // Step 4: the result opens in a read-only editor. Its text is compared here, case and all:
  // Playwright's hasText ignores case, so it only finds the editor.
  const editor = page.locator(`.editor-instance .monaco-editor[data-uri^="${RESULT_SCHEME}:"]`).first();
  const quotedText = JSON.stringify(EXPECTED_TEXT); // the envelope's "text" value, quotes included
  /** @type {string[]} */
  let lines = [];
  for (const until = Date.now() + RESULT_TIMEOUT_MS; Date.now() < until; await sleep(POLL_MS)) {
    lines = (await editor.isVisible()) ? await renderedLines(editor) : [];
    if (lines.some((line) => line.includes(quotedText))) break;
  }
  if (!lines.some((line) => line.includes(quotedText))) {
    const shown = await page.locator('.editor-instance .monaco-editor .view-lines').allInnerTexts();
    const notices = await page.locator('.notification-list-item-message').allInnerTexts();
    throw new TestFailure(
      `no result editor showed ${quotedText} within ${RESULT_TIMEOUT_MS / 1000} s; editors: ${JSON.stringify(shown.map(plain))}; notifications: ${JSON.stringify(notices)}`,
    );
  }
  if (!FIRST_LINE.test(lines[0] ?? '')) throw new TestFailure(`the result's first line is ${JSON.stringify(lines[0])}, expected ${FIRST_LINE}`);
  log(`result editor: ${lines[0]}`);
  const tab = await textOf(page.locator('.tabs-container .tab.active'));
  if (!tab.includes(`${TOOL_NAME}-result`)) throw new TestFailure(`the active tab is ${JSON.stringify(tab)}, not the result of ${TOOL_NAME}`);
  // The call's progress toast closes when the call ends, with a short delay; not an error if it lingers.
  await page
    .locator('.notification-toast', { hasText: `Calling ${TOOL_NAME}` })
    .waitFor({ state: 'hidden', timeout: PROGRESS_TOAST_GRACE_MS })
    .catch(() => log(`the "Calling ${TOOL_NAME}…" toast is still shown`));
  await screenshot('result');

  // Read-only: typing into it changes nothing, and Monaco says why.
  await editor.locator('.view-lines').click();
  await page.keyboard.type('x');
  const refusal = await page
    .locator('.monaco-editor-overlaymessage', { hasText: READ_ONLY_MESSAGE })
    .waitFor({ timeout: PROMPT_TIMEOUT_MS })
    .then(() => true, () => false);
  const after = await renderedLines(editor);
  if (after.join('\n') !== lines.join('\n') || !refusal) {
    throw new TestFailure(`the result editor is not read-only: after typing, its lines are ${JSON.stringify(after.slice(0, 3))}${refusal ? '' : ` and no "${READ_ONLY_MESSAGE}" message appeared`}`);
  }
  log('the result editor is read-only');
}

/**
 * Visible text lines of a Monaco editor, top to bottom: the DOM order of `.view-line` is not the line order.
 * @param {import('playwright-core').Locator} editor
 */
async function renderedLines(editor) {
  const lines = await editor.locator('.view-lines .view-line').evaluateAll((elements) =>
    elements.map((element) => ({ top: Number.parseFloat(/** @type {HTMLElement} */ (element).style.top) || 0, text: element.textContent ?? '' })),
  );
  return lines.sort((a, b) => a.top - b.top).map((line) => plain(line.text));
}

/** @param {import('playwright-core').Locator} locator  its text, or '' when it is not there */
async function textOf(locator) {
  return (await locator.first().textContent({ timeout: 1_000 }).catch(() => '')) ?? '';
}

process.exit(
  await runBrowserTest({
    label: 'call-tool-from-palette',
    log,
    artifactsDir: ARTIFACTS_DIR,
    screenshots: SCREENSHOTS,
    vsixes: async (run) => [await vsixToTest(run, log)],
    writeWorkspace,
    settings: WORKBENCH_SETTINGS,
    viewport: { width: 1280, height: 800 },
    steps: ({ page, url }) => callToolFromPalette(page, url),
  }),
);
