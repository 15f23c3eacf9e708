/**
 * The @router participant end to end in real VS Code, with real MCP servers and a FAKE scripted model
 * (test/extension/fakeModelProvider, registered through the language-model provider API). VS Code has no
 * public way to send a chat request to a participant from a test, so the tests call the participant's
 * handler with the real model object and a recording stand-in for the response stream.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import * as vscode from 'vscode';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ToolRouterApi } from '../../../src/extension/api';
import { internalsOf, type ToolRouterInternals } from '../../../src/extension/internals';
import { processesWith } from '../../processes';
import { COMMANDS } from '../../../src/extension/commandIds';

interface FakeModelApi {
  setScript(steps: Array<{ text?: string; toolCalls?: Array<{ name: string; input: object }> }>): void;
  readonly requests: ReadonlyArray<{ tools: string[]; toolMode: number | undefined; messages: number; lastUserText: string }>;
}

function resultText(result: unknown): string {
  return (result as CallToolResult).content.map((b) => (b.type === 'text' ? b.text : '')).join('\n');
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

/** The router's services (the tests drive its participant directly), the fake model's API, and the fake model. */
async function apis(): Promise<{ router: ToolRouterInternals; fake: FakeModelApi; model: vscode.LanguageModelChat }> {
  const router = vscode.extensions.getExtension<ToolRouterApi>('mcp-tool-router.mcp-tool-router')!;
  const fakeExt = vscode.extensions.getExtension<FakeModelApi>('mcp-tool-router-tests.tool-router-fake-model');
  assert.ok(fakeExt, 'the fake model extension is loaded');
  const fake = fakeExt.isActive ? fakeExt.exports : await fakeExt.activate();
  const api = router.isActive ? router.exports : await router.activate();
  await api.whenSettled();
  const [model] = await vscode.lm.selectChatModels({ vendor: 'tool-router-test-fake' });
  assert.ok(model, 'the fake model is registered');
  return { router: internalsOf(api), fake, model };
}

/**
 * One turn of a chat. `previous` continues the chat of an earlier answer: VS Code hands a participant its
 * earlier turns' results in the history, which is how the router tells one chat from another.
 */
async function ask(api: ToolRouterInternals, model: vscode.LanguageModelChat, prompt: string, previous?: vscode.ChatResult): Promise<{ stream: RecordingStream; result: vscode.ChatResult }> {
  const stream = new RecordingStream();
  const request = { prompt, model, toolReferences: [], references: [], command: undefined, id: `req-${Date.now()}` } as unknown as vscode.ChatRequest;
  const history = previous ? [{ participant: 'toolRouter.router', result: previous, response: [] }] : [];
  const context = { history } as unknown as vscode.ChatContext;
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
    await ask(router, model, 'what is the weather like on mars', result);
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

  it('keeps sticky tools and loop counts per chat, through a rebuild of the selection engine', async () => {
    const { router, fake, model } = await apis();
    const echo = { toolCalls: [{ name: 'everything_echo', input: { message: 'chat A' } }] };
    fake.setScript([echo, echo, { text: 'A done' }]);
    const a1 = await ask(router, model, 'please echo chat A back to me twice');
    fake.setScript([{ text: 'B done' }]);
    const b1 = await ask(router, model, 'what is the weather like on mars');
    const idA = (a1.result.metadata as { chatId: string }).chatId;
    const idB = (b1.result.metadata as { chatId: string }).chatId;
    assert.notEqual(idA, idB);
    // Loop counts: A's two calls are A's alone.
    const callsIn = (id: string): number => router.participant.chats.peek(id)!.loops.history().reduce((n, t) => n + t.calls.length, 0);
    assert.equal(callsIn(idA), 2);
    assert.equal(callsIn(idB), 0);
    // A settings change rebuilds the selection engine; the chats keep their sticky tools.
    const config = vscode.workspace.getConfiguration('toolRouter');
    try {
      await config.update('selection.depth', 0.75, vscode.ConfigurationTarget.Workspace);
      await new Promise((r) => setTimeout(r, 500));
      fake.setScript([{ text: 'A again' }]);
      const a2 = await ask(router, model, 'what is the weather like on mars', a1.result);
      assert.equal((a2.result.metadata as { chatId: string }).chatId, idA);
      // Judged by the sticky stage, not by the tool's absence: in a catalogue this small the ranking may
      // send echo to either chat on its own merits, whatever the model.
      const stickyEcho = (): boolean => router.participant.history.at(-1)!.selection.tools.some((t) => t.name === 'everything_echo' && t.stages.some((s) => s.startsWith('sticky:')));
      assert.ok(fake.requests[0]!.tools.includes('everything_echo'), 'chat A keeps its sticky tool');
      assert.ok(stickyEcho(), 'chat A sends echo as sticky');
      fake.setScript([{ text: 'B again' }]);
      await ask(router, model, 'what is the weather like on mars', b1.result);
      assert.ok(!stickyEcho(), `chat B never called echo, yet it is sticky there: ${router.participant.history.at(-1)!.selection.tools.map((t) => `${t.name} (${t.stages.join(' ')})`).join(', ')}`);
    } finally {
      await config.update('selection.depth', undefined, vscode.ConfigurationTarget.Workspace);
    }
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
    // A prompt for the memory server alone, so the everything server's sum tool is not sent up front.
    const prompt = 'store a note in the knowledge graph: Ada likes tea';
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

  it('serves agent mode and other clients through the one gateway in the extension host, each server running once', async () => {
    const { router, fake, model } = await apis();
    // One surface: the router's language-model tools are gone; agent mode gets the gateway.
    const names = vscode.lm.tools.map((t) => t.name);
    assert.ok(!names.includes('toolRouter_searchTools') && !names.includes('toolRouter_callTool'), JSON.stringify(names));
    const { url, secret } = await router.gateway.connection();
    assert.equal(url.hostname, '127.0.0.1');
    const unauthorised = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }) });
    assert.equal(unauthorised.status, 401);

    const client = new Client({ name: 'extension-host-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${secret}` } } }));
    try {
      const found = await client.callTool({ name: 'toolRouter_searchTools', arguments: { query: 'echo a message back', limit: 5 } });
      assert.match(resultText(found), /everything_echo/);
      const called = await client.callTool({ name: 'toolRouter_callTool', arguments: { name: 'everything_echo', arguments: { message: 'agent mode' } } });
      assert.match(resultText(called), /Echo: agent mode/);
      // @router and Call Tool on the same servers.
      fake.setScript([{ toolCalls: [{ name: 'everything_echo', input: { message: 'chat' } }] }, { text: 'done: {last}' }]);
      await ask(router, model, 'please echo the word chat back to me');
      const envelope = await vscode.commands.executeCommand<{ ok: boolean }>(COMMANDS.callTool, { tool: 'everything_echo', args: { message: 'palette' }, quiet: true });
      assert.equal(envelope.ok, true);
      // Every client went through the one router: one process per server. Only this extension host's
      // descendants count (the router and VS Code's own MCP launcher both spawn here), so a demo running
      // the same servers elsewhere on the machine does not change the count.
      const pid = router.service.router.getConnection('everything')!.status.pid;
      const under = { under: process.pid };
      assert.deepEqual(processesWith('server-everything/dist/index.js', under), [pid]);
      assert.equal(processesWith('server-memory/dist/index.js', under).length, 1);
    } finally {
      await client.close();
    }
  });

  it('ranks a starting server on the tools it listed last time, and offers them once it lists them', async () => {
    const { router, fake, model } = await apis();
    await router.selection.saveToolLists();
    const saved = JSON.parse(await readFile(router.selection.toolListsFile, 'utf8')) as { servers: Record<string, { tools: Array<{ exposedName: string }> }> };
    assert.ok(saved.servers['memory']?.tools.some((t) => t.exposedName === 'memory_read_graph'), 'the memory server\'s list is saved');
    await router.service.setServerEnabled('memory', false);
    try {
      await router.service.setServerEnabled('memory', true);
      assert.equal(router.service.router.getConnection('memory')?.currentState, 'starting');
      assert.equal(router.service.router.getTool('memory_read_graph'), undefined, 'not listed yet');
      assert.ok(router.selection.isSavedOnly('memory_read_graph'), 'ranked from the saved list meanwhile');
      fake.setScript([{ toolCalls: [{ name: 'memory_read_graph', input: {} }] }, { text: 'The graph: {last}' }]);
      const { stream, result } = await ask(router, model, 'read the whole knowledge graph from memory');
      assert.ok(stream.progressMessages.some((m) => /Waiting for memory to start/.test(m)), JSON.stringify(stream.progressMessages));
      assert.ok(fake.requests[0]!.tools.includes('memory_read_graph'), JSON.stringify(fake.requests[0]!.tools));
      assert.deepEqual((result.metadata as { calls: string[] }).calls, ['memory_read_graph']);
      assert.equal(router.selection.isSavedOnly('memory_read_graph'), false, 'live once listed');
    } finally {
      await router.service.setServerEnabled('memory', true);
      await router.service.router.whenSettled(60_000);
    }
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
