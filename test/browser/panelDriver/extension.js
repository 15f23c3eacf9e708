// Test only, never shipped. Runs one @router turn with the FAKE scripted model
// (test/extension/fakeModelProvider), through the same participant handler the chat view calls, as the
// extension-host chat tests do. It exists because code-server's chat view offers no model without a
// Copilot sign-in, so the browser test cannot send `@router …` from the chat input.
// CommonJS because the extension host loads it with require().
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the extension host require()s extensions
const vscode = require('vscode');

const ROUTER_ID = 'mcp-tool-router.mcp-tool-router';
const FAKE_ID = 'mcp-tool-router-tests.tool-router-fake-model';
/** Where the router's API carries its services (src/extension/internals.ts): they are not part of the API. */
const INTERNALS_KEY = Symbol.for('mcp-tool-router.internals');

/** The scripted turns: each a prompt and the fake model's answers, step by step. */
const ECHO = { toolCalls: [{ name: 'everything_echo', input: { message: 'panel' } }] };
const LOOP = { toolCalls: [{ name: 'everything_echo', input: { message: 'again' } }] };
const TURNS = {
  echoTurn: { prompt: 'please echo the word panel back to me', script: [ECHO, { text: 'The tool said: {last}' }] },
  loopTurn: { prompt: 'echo again and again', script: [LOOP, LOOP, LOOP, LOOP, { text: 'final: {last}' }] },
};

async function runTurn(which) {
  const routerExt = vscode.extensions.getExtension(ROUTER_ID);
  const fakeExt = vscode.extensions.getExtension(FAKE_ID);
  if (!routerExt || !fakeExt) throw new Error(`missing ${routerExt ? FAKE_ID : ROUTER_ID}`);
  const router = routerExt.isActive ? routerExt.exports : await routerExt.activate();
  const fake = fakeExt.isActive ? fakeExt.exports : await fakeExt.activate();
  await router.whenSettled();
  const [model] = await vscode.lm.selectChatModels({ vendor: 'tool-router-test-fake' });
  if (!model) throw new Error('the fake model is not registered');
  const { prompt, script } = TURNS[which];
  fake.setScript(script);
  const text = [];
  const stream = { markdown: (v) => text.push(typeof v === 'string' ? v : v.value), progress: () => undefined };
  const request = { prompt, model, toolReferences: [], references: [], command: undefined, id: `panel-test-${Date.now()}` };
  await router[INTERNALS_KEY].participant.handler(request, { history: [] }, stream, new vscode.CancellationTokenSource().token);
  void vscode.window.showInformationMessage(`Panel test turn "${which}" finished: ${text.join('').slice(0, 80)}`);
}

/** Tokens the cost tick adds, so the panel's totals visibly change; far below any limit the test sets first. */
const TICK_USAGE = { promptTokens: 7, completionTokens: 3, calls: 1 };
/** The tick lands this long after the command, so the test can first put the focus back in the panel. */
const TICK_DELAY_MS = 3000;

/**
 * What the panel gets once a minute, on demand: a little usage (so the numbers change) and the cost
 * message the panel's poll sends, so the test need not wait a minute to see the update land in place.
 */
async function costTick() {
  const routerExt = vscode.extensions.getExtension(ROUTER_ID);
  if (!routerExt) throw new Error(`missing ${ROUTER_ID}`);
  const router = routerExt.isActive ? routerExt.exports : await routerExt.activate();
  setTimeout(() => {
    router[INTERNALS_KEY].cost.record(TICK_USAGE);
    router[INTERNALS_KEY].panel.refreshCost();
  }, TICK_DELAY_MS);
}

function activate(context) {
  for (const which of Object.keys(TURNS)) {
    context.subscriptions.push(vscode.commands.registerCommand(`toolRouterPanelTest.${which}`, () => runTurn(which)));
  }
  context.subscriptions.push(vscode.commands.registerCommand('toolRouterPanelTest.costTick', costTick));
}

module.exports = { activate };
