// A FAKE language model for the extension-host tests of MCP Tool Router. It answers each request with
// the next step of a script set by the test, and records what each request offered (tools, tool mode,
// messages), so tests can check that only selected tools went out. No real model can be scripted.
// CommonJS because the extension host loads it with require().
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the extension host require()s extensions
const vscode = require('vscode');

/** @type {Array<{text?: string, toolCalls?: Array<{name: string, input: object}>}>} */
let script = [];
/** @type {Array<{tools: string[], toolMode: number | undefined, messages: number, lastUserText: string}>} */
const requests = [];
let callCounter = 0;

function activate(context) {
  context.subscriptions.push(
    vscode.lm.registerLanguageModelChatProvider('tool-router-test-fake', {
      provideLanguageModelChatInformation() {
        return [{ id: 'scripted', name: 'Scripted fake model', family: 'fake', version: '1', maxInputTokens: 1000000, maxOutputTokens: 100000, capabilities: { toolCalling: true } }];
      },
      async provideLanguageModelChatResponse(_model, messages, options, progress) {
        const last = messages[messages.length - 1];
        const lastText = last ? last.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : p instanceof vscode.LanguageModelToolResultPart ? p.content.map((c) => c.value ?? '').join('') : '')).join('') : '';
        requests.push({ tools: (options.tools ?? []).map((t) => t.name), toolMode: options.toolMode, messages: messages.length, lastUserText: lastText });
        const step = script.shift() ?? { text: '(the fake model has no more script)' };
        if (step.text) progress.report(new vscode.LanguageModelTextPart(step.text.replace('{last}', lastText)));
        for (const call of step.toolCalls ?? []) progress.report(new vscode.LanguageModelToolCallPart(`call-${++callCounter}`, call.name, call.input));
      },
      provideTokenCount(_model, text) {
        const s = typeof text === 'string' ? text : JSON.stringify(text);
        return Promise.resolve(Math.ceil(s.length / 4));
      },
    }),
  );
  return {
    setScript(steps) {
      script = [...steps];
      requests.length = 0;
    },
    requests,
  };
}

module.exports = { activate };
