/**
 * The @router participant end to end in real VS Code, with real MCP servers and a FAKE scripted model
 * (test/extension/fakeModelProvider, registered through the language-model provider API). VS Code has no
 * public way to send a chat request to a participant from a test, so the tests call the participant's
 * handler with the real model object and a recording stand-in for the response stream.
 */
import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { ToolRouterApi } from '../../../src/extension/extension';
import { COMMANDS } from '../../../src/extension/settings';

interface FakeModelApi {
  setScript(steps: Array<{ text?: string; toolCalls?: Array<{ name: string; input: object }> }>): void;
  readonly requests: ReadonlyArray<{ tools: string[]; toolMode: number | undefined; messages: number; lastUserText: string }>;
}

/** Records what the participant streams; a real ChatResponseStream cannot be made outside a chat view. */
class RecordingStream {
  readonly markdowns: string[] = [];
  readonly progressMessages: string[] = [];
  markdown(value: string | vscode.MarkdownString): void {
    this.markdowns.push(typeof value === 'string' ? value : value.value);
  }
  progress(value: string): void {
    this.progressMessages.push(value);
  }
}

async function apis(): Promise<{ router: ToolRouterApi; fake: FakeModelApi; model: vscode.LanguageModelChat }> {
  const router = vscode.extensions.getExtension<ToolRouterApi>('mcp-tool-router.mcp-tool-router')!;
  const fakeExt = vscode.extensions.getExtension<FakeModelApi>('mcp-tool-router-tests.tool-router-fake-model');
  assert.ok(fakeExt, 'the fake model extension is loaded');
  const fake = fakeExt.isActive ? fakeExt.exports : await fakeExt.activate();
  const api = router.isActive ? router.exports : await router.activate();
  await api.whenSettled();
  const [model] = await vscode.lm.selectChatModels({ vendor: 'tool-router-test-fake' });
  assert.ok(model, 'the fake model is registered');
  return { router: api, fake, model };
}

async function ask(api: ToolRouterApi, model: vscode.LanguageModelChat, prompt: string): Promise<{ stream: RecordingStream; result: vscode.ChatResult }> {
  const stream = new RecordingStream();
  const request = { prompt, model, toolReferences: [], references: [], command: undefined, id: `req-${Date.now()}` } as unknown as vscode.ChatRequest;
  const context = { history: [] } as unknown as vscode.ChatContext;
  const token = new vscode.CancellationTokenSource().token;
  const result = (await api.participant.handler(request, context, stream as unknown as vscode.ChatResponseStream, token)) as vscode.ChatResult;
  return { stream, result };
}

describe('@router chat participant (with a fake scripted model)', function () {
  this.timeout(90_000);

  it('offers only the selected tools, routes the call, feeds the result back, and makes used tools sticky', async () => {
    const { router, fake, model } = await apis();
    const engine = await router.selection.getEngine();
    await engine.index?.whenReady();
    fake.setScript([{ toolCalls: [{ name: 'everything_echo', input: { message: 'routed' } }] }, { text: 'The tool said: {last}' }]);
    const { stream, result } = await ask(router, model, 'please echo the word routed back to me');
    const offered = fake.requests[0]!.tools;
    assert.ok(offered.includes('everything_echo'), JSON.stringify(offered));
    assert.ok(offered.length < router.service.router.listTools().length, `only selected tools are offered (${offered.length})`);
    assert.match(stream.markdowns.join(''), /The tool said: Echo: routed/);
    assert.deepEqual((result.metadata as { calls: string[] }).calls, ['everything_echo']);

    fake.setScript([{ text: 'ok' }]);
    await ask(router, model, 'what is the weather like on mars');
    assert.ok(fake.requests[0]!.tools.includes('everything_echo'), 'the tool used last turn is sticky');

    // Learning from use: the turn was recorded on this machine with the tool the model called, and the
    // Clear command forgets it.
    await router.learning.whenLoaded();
    const recorded = router.learning.memory.records().find((r) => r.prompt === 'please echo the word routed back to me');
    assert.ok(recorded, 'the turn is in the use memory');
    assert.deepEqual([...recorded.called], ['everything_echo']);
    assert.ok(recorded.offered.includes('everything_echo'));
    const replay = (await vscode.commands.executeCommand('toolRouter.replayUsage', { quiet: true })) as { alone: { turns: number; coverageAfter: number } } | undefined;
    assert.ok(replay && replay.alone.turns >= 1, `replay ran over the recorded turns: ${JSON.stringify(replay?.alone)}`);
    await vscode.commands.executeCommand('toolRouter.clearUsageMemory');
    assert.equal(router.learning.memory.size, 0, 'cleared');
  });

  it('stops a loop and tells the model what to do instead', async () => {
    const { router, fake, model } = await apis();
    const same = { toolCalls: [{ name: 'everything_echo', input: { message: 'again' } }] };
    fake.setScript([same, same, same, same, { text: 'final: {last}' }]);
    const { stream } = await ask(router, model, 'echo again and again');
    const turn = router.participant.history.at(-1)!;
    assert.equal(turn.result.calls.filter((c) => c.envelope.ok).length, 3);
    assert.equal(turn.result.warnings.filter((w) => w.kind === 'loop').length, 1);
    assert.match(stream.markdowns.join(''), /final: LOOP_DETECTED/);
  });

  it('retries an answer that claims an action no tool performed', async () => {
    const { router, fake, model } = await apis();
    fake.setScript([{ text: "I've sent the message to Bob." }, { toolCalls: [{ name: 'everything_echo', input: { message: 'for real' } }] }, { text: 'Now it is done.' }]);
    const { stream } = await ask(router, model, 'echo for real');
    assert.equal(fake.requests[1]!.toolMode, vscode.LanguageModelChatToolMode.Required);
    assert.match(stream.markdowns.join(''), /Now it is done\./);
    assert.ok(router.participant.history.at(-1)!.result.warnings.some((w) => w.kind === 'hallucination'));
  });

  it('pauses when the hourly token cap is crossed, answers "paused" without the model, and goes on after a reset', async () => {
    const { router, fake, model } = await apis();
    const config = vscode.workspace.getConfiguration('toolRouter');
    try {
      await config.update('cost.hourlyTokenCap', 200, vscode.ConfigurationTarget.Workspace);
      await new Promise((r) => setTimeout(r, 300));
      fake.setScript([{ text: 'x'.repeat(2000) }]);
      const first = await ask(router, model, 'write a lot');
      assert.match(first.stream.markdowns.join(''), /paused/i);
      fake.setScript([{ text: 'should not be asked' }]);
      const second = await ask(router, model, 'anything');
      assert.match(second.stream.markdowns.join(''), /paused/i);
      assert.equal(fake.requests.length, 0, 'the model was not called while paused');
    } finally {
      await config.update('cost.hourlyTokenCap', undefined, vscode.ConfigurationTarget.Workspace);
      await vscode.commands.executeCommand(COMMANDS.resetCostWindow);
    }
    fake.setScript([{ text: 'back' }]);
    const after = await ask(router, model, 'hello again');
    assert.match(after.stream.markdowns.join(''), /back/);
  });

  it('offers a search tool at every step; the tools it finds are offered from the next step, and a found tool it calls is a miss', async () => {
    const { router, fake, model } = await apis();
    await router.learning.whenLoaded();
    fake.setScript([
      { toolCalls: [{ name: 'toolRouter_findTools', input: { query: 'add two numbers and return their sum' } }] },
      { toolCalls: [{ name: 'everything_get-sum', input: { a: 2, b: 3 } }] },
      { text: 'sum: {last}' },
    ]);
    // A prompt one tool clearly answers, so few tools are sent up front and the sum tool is not among them.
    const prompt = 'echo back the phrase: lighthouse keeper';
    const { stream } = await ask(router, model, prompt);
    assert.ok(fake.requests.length === 3 && fake.requests.every((r) => r.tools.includes('toolRouter_findTools')), JSON.stringify(fake.requests.map((r) => r.tools)));
    const turn = router.participant.history.at(-1)!;
    assert.ok(turn.result.found.length > 0, `the search found tools that were not offered; offered first: ${JSON.stringify(fake.requests[0]!.tools)}`);
    for (const f of turn.result.found.filter((x) => x.offered)) {
      assert.ok(!fake.requests[0]!.tools.includes(f.name) && fake.requests[1]!.tools.includes(f.name), `${f.name} is offered from the step after the search`);
    }
    assert.match(stream.markdowns.join(''), /sum: [\s\S]*5/);
    if (turn.result.found.some((f) => f.name === 'everything_get-sum')) {
      const record = router.learning.memory.records().find((r) => r.prompt === prompt);
      assert.ok(record?.misses.includes('everything_get-sum'), JSON.stringify(record));
    }
  });

  it('offers search and call as language-model tools for agent mode', async () => {
    await apis();
    const names = vscode.lm.tools.map((t) => t.name);
    assert.ok(names.includes('toolRouter_searchTools') && names.includes('toolRouter_callTool'), JSON.stringify(names));
    const token = new vscode.CancellationTokenSource().token;
    const found = await vscode.lm.invokeTool('toolRouter_searchTools', { input: { query: 'echo a message back', limit: 5 }, toolInvocationToken: undefined }, token);
    const searchText = found.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : '')).join('');
    const parsed = JSON.parse(searchText) as { tools: Array<{ name: string; inputSchema: unknown }> };
    assert.ok(parsed.tools.length <= 5 && parsed.tools.some((t) => t.name === 'everything_echo' && t.inputSchema), searchText);
    const called = await vscode.lm.invokeTool('toolRouter_callTool', { input: { name: 'everything_echo', arguments: { message: 'agent mode' } }, toolInvocationToken: undefined }, token);
    const callText = called.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : '')).join('');
    assert.match(callText, /"ok": true[\s\S]*Echo: agent mode/);
  });

  it('gives a clear message when a server dies mid-turn', async () => {
    const { router, fake, model } = await apis();
    const everything = router.service.router.getConnection('everything')!;
    const pid = everything.status.pid;
    assert.ok(pid, 'the server runs as a process');
    fake.setScript([{ toolCalls: [{ name: 'everything_trigger-long-running-operation', input: { duration: 10, steps: 5 } }] }, { text: 'result: {last}' }]);
    const pending = ask(router, model, 'run the long operation');
    // The operation takes 10 s; a second in, the server process is killed under the call.
    await new Promise((r) => setTimeout(r, 1000));
    process.kill(pid, 'SIGKILL');
    const { stream } = await pending;
    assert.match(stream.markdowns.join(''), /result: SERVER_RESTARTED: Server "everything" stopped while/);
    const deadline = Date.now() + 30_000;
    while (everything.status.state !== 'ready' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    assert.equal(everything.status.state, 'ready', 'the server came back');
  });
});
