import assert from 'node:assert/strict';
import { runChatTurn, truncateHistory, type ChatMessage, type ChatModel, type ChatToolDefinition, type ToolCaller } from '../../../src/core/chat/chatTurn';
import { CostMonitor } from '../../../src/core/guards/costMonitor';
import { LoopDetector } from '../../../src/core/guards/loopDetector';
import type { Selection } from '../../../src/core/selection/selectionTypes';
import { ScriptedFakeModel, TableFakeRouter } from './scriptedFakes';

const TOOLS: ChatToolDefinition[] = [
  { name: 's_search', description: 'Search', inputSchema: { type: 'object', properties: { q: { type: 'string' } } }, annotations: { readOnlyHint: true } },
  { name: 's_send', description: 'Send a message', inputSchema: { type: 'object', properties: { to: { type: 'string' } } }, annotations: { destructiveHint: false } },
];
const SELECTION = { tools: TOOLS.map((t) => ({ name: t.name, stages: ['embedding'], tier: 2, reason: 'test' })) } as unknown as Selection;

function turn(model: ChatModel, router: ToolCaller, extra: { cost?: CostMonitor; loops?: LoopDetector; maxSteps?: number } = {}) {
  return runChatTurn({
    prompt: 'do it',
    history: [],
    selection: SELECTION,
    tools: TOOLS,
    model,
    router,
    loops: extra.loops ?? new LoopDetector(),
    cost: extra.cost ?? new CostMonitor({}),
    turn: 1,
    ...(extra.maxSteps ? { maxSteps: extra.maxSteps } : {}),
  });
}

describe('runChatTurn', () => {
  it('offers only the selected tools, routes a call and feeds the result back', async () => {
    const model = new ScriptedFakeModel([
      { text: '', toolCalls: [{ callId: 'c1', name: 's_search', input: { q: 'x' } }] },
      (messages) => ({ text: `found: ${(messages.at(-1) as { text: string }).text}`, toolCalls: [] }),
    ]);
    const router = new TableFakeRouter(() => 'three results');
    const result = await turn(model, router);
    assert.deepEqual(model.requests[0]!.tools, ['s_search', 's_send']);
    assert.deepEqual(router.calls, [{ name: 's_search', args: { q: 'x' } }]);
    assert.equal(result.answer, 'found: three results');
    assert.ok(result.usage.promptTokens > 0);
  });

  it('stops a loop: after 3 identical calls with the same result, the next is refused with LOOP_DETECTED', async () => {
    const call = { text: '', toolCalls: [{ callId: 'c', name: 's_search', input: { q: 'same' } }] };
    const reordered = { text: '', toolCalls: [{ callId: 'c', name: 's_search', input: { q: ' same ' } }] };
    const model = new ScriptedFakeModel([call, call, call, reordered, { text: 'I give up', toolCalls: [] }]);
    const router = new TableFakeRouter(() => 'same answer');
    const result = await turn(model, router);
    assert.equal(router.calls.length, 3, 'the fourth call (the same but for whitespace) never reached the router');
    assert.equal(result.warnings.filter((w) => w.kind === 'loop').length, 1);
    const last = result.calls.at(-1)!.envelope;
    assert.equal(last.ok === false && last.error.type, 'LOOP_DETECTED');
  });

  it('retries an answer that claims an action without a tool call, with tools required', async () => {
    const model = new ScriptedFakeModel([
      { text: "I've sent the message to Bob.", toolCalls: [] },
      { text: '', toolCalls: [{ callId: 'c1', name: 's_send', input: { to: 'Bob' } }] },
      { text: 'Sent.', toolCalls: [] },
    ]);
    const result = await turn(model, new TableFakeRouter(() => 'ok'));
    assert.equal(model.requests[1]!.toolMode, 'required');
    assert.equal(result.answer, 'Sent.');
    assert.deepEqual(result.warnings.map((w) => w.kind), ['hallucination']);
  });

  it('answers honestly when the retry calls no tool either', async () => {
    const model = new ScriptedFakeModel([
      { text: 'The file has been created.', toolCalls: [] },
      { text: 'Done, it has been created.', toolCalls: [] },
    ]);
    const result = await turn(model, new TableFakeRouter(() => 'ok'));
    assert.match(result.answer, /wasn't able to complete this action/);
    assert.deepEqual(result.warnings.map((w) => (w.kind === 'hallucination' ? w.outcome : w.kind)), ['retried', 'replaced']);
  });

  it('pauses when the hourly cap is reached, and answers without the model while paused', async () => {
    const cost = new CostMonitor({ hourlyTokenCap: 50 });
    const model = new ScriptedFakeModel([{ text: 'x'.repeat(400), toolCalls: [] }]);
    const first = await turn(model, new TableFakeRouter(() => 'ok'), { cost });
    assert.equal(first.paused, true);
    assert.match(first.answer, /paused/);
    const second = await turn(model, new TableFakeRouter(() => 'ok'), { cost });
    assert.equal(second.paused, true);
    assert.equal(model.requests.length, 1, 'the paused turn did not call the model');
    cost.resume();
    assert.equal(cost.isPaused(), false);
  });

  it('stops after maxSteps and says so', async () => {
    let n = 0;
    const model = new ScriptedFakeModel(Array.from({ length: 3 }, () => () => ({ text: '', toolCalls: [{ callId: `c${n}`, name: 's_search', input: { q: `q${n++}` } }] })));
    const result = await turn(model, new TableFakeRouter((_, a) => JSON.stringify(a)), { maxSteps: 3 });
    assert.match(result.answer, /stopped after 3 steps/);
  });
});

describe('truncateHistory', () => {
  it('shrinks old tool results to one line and keeps the last 2 exchanges verbatim', () => {
    const long = 'line one\nline two\n' + 'x'.repeat(500);
    const history: ChatMessage[] = [];
    for (let i = 0; i < 4; i++) {
      history.push({ role: 'user', text: `q${i}` }, { role: 'assistant', text: '', toolCalls: [{ callId: `c${i}`, name: 't', input: {} }] }, { role: 'tool', callId: `c${i}`, name: 't', text: long });
    }
    const out = truncateHistory(history);
    const tools = out.filter((m) => m.role === 'tool').map((m) => m.text);
    assert.match(tools[0]!, /^\[earlier result of t, shortened\] line one line two x+…$/);
    assert.ok(tools[0]!.length < 220);
    assert.equal(tools[2], long);
    assert.equal(tools[3], long);
  });
});
