import assert from 'node:assert/strict';
import { AnswerStream } from '../../../src/core/chat/answerStream';
import { runChatTurn, type ChatToolDefinition, type ModelResponse } from '../../../src/core/chat/chatTurn';
import { CostMonitor } from '../../../src/core/guards/costMonitor';
import { LoopDetector } from '../../../src/core/guards/loopDetector';
import type { Selection } from '../../../src/core/selection/selectionTypes';
import { ScriptedFakeModel, TableFakeRouter } from './scriptedFakes';

describe('AnswerStream', () => {
  it('sends finished sentences as they come and keeps an unfinished one back', () => {
    const out: string[] = [];
    const s = new AnswerStream((t) => out.push(t));
    s.write('The weather in Lyon ');
    assert.deepEqual(out, []);
    s.write('is mild. Tomorrow');
    assert.deepEqual(out, ['The weather in Lyon is mild.']);
    s.write(' it rains.\n');
    s.endStep(true);
    assert.equal(out.join(''), 'The weather in Lyon is mild. Tomorrow it rains.\n');
  });

  it('holds a claimed action until the step ends, and drops it when the guard does not accept it', () => {
    const out: string[] = [];
    const s = new AnswerStream((t) => out.push(t));
    s.write('Sure thing. ');
    s.write("I've sent the invite to Ana. Anything else?");
    assert.equal(out.join(''), 'Sure thing.');
    s.endStep(false);
    assert.equal(out.join(''), 'Sure thing.');
  });

  it('streams freely once a tool has run', () => {
    const out: string[] = [];
    const s = new AnswerStream((t) => out.push(t));
    s.stopGuarding();
    s.write("I've sent");
    s.write(' it.');
    assert.deepEqual(out, ["I've sent", ' it.']);
  });
});

const TOOLS: ChatToolDefinition[] = [{ name: 'mail_send', description: 'Send an email', inputSchema: { type: 'object', properties: { to: { type: 'string' } } }, annotations: { destructiveHint: false } }];
const SELECTION = { tools: TOOLS.map((t) => ({ name: t.name, stages: ['embedding'], tier: 2, reason: 'test' })) } as unknown as Selection;

describe('runChatTurn streaming (with a FAKE scripted model)', () => {
  it('streams the answer in several parts, and still catches a claimed action before it reaches the user', async () => {
    const streamed = (parts: string[], toolCalls: ModelResponse['toolCalls'] = []): ModelResponse => ({ text: '', parts, toolCalls }) as ModelResponse;
    const model = new ScriptedFakeModel([
      streamed(['Sure. ', "I've emailed ", 'Ana the notes.']),
      streamed(['Sending it now.'], [{ callId: 'c1', name: 'mail_send', input: { to: 'ana@example.com' } }]),
      streamed(['The email ', 'went out ', 'to Ana. ', 'She has the notes.']),
    ]);
    const pieces: string[] = [];
    const result = await runChatTurn({
      prompt: 'email Ana the notes',
      history: [],
      selection: SELECTION,
      tools: TOOLS,
      model,
      router: new TableFakeRouter(() => 'queued'),
      loops: new LoopDetector(),
      cost: new CostMonitor({}),
      turn: 1,
      events: { onText: (t) => pieces.push(t) },
    });
    const shown = pieces.join('');
    assert.ok(result.streamed);
    assert.ok(pieces.length >= 4, `several parts: ${JSON.stringify(pieces)}`);
    assert.doesNotMatch(shown, /I've emailed/, 'the unbacked claim never reached the user');
    assert.deepEqual(result.warnings.map((w) => (w.kind === 'hallucination' ? w.outcome : w.kind)), ['retried']);
    assert.equal(shown, 'Sure.\n\nSending it now.\n\nThe email went out to Ana. She has the notes.');
    assert.equal(result.answer, 'The email went out to Ana. She has the notes.');
  });

  it('streams the honest answer in place of a claim the retry did not back either', async () => {
    const model = new ScriptedFakeModel([{ text: 'The file has been created.', toolCalls: [] }, { text: 'Done, it has been created.', toolCalls: [] }]);
    const pieces: string[] = [];
    const result = await runChatTurn({ prompt: 'make the file', history: [], selection: SELECTION, tools: TOOLS, model, router: new TableFakeRouter(() => 'ok'), loops: new LoopDetector(), cost: new CostMonitor({}), turn: 1, events: { onText: (t) => pieces.push(t) } });
    assert.match(pieces.join(''), /^I wasn't able to complete this action/);
    assert.equal(pieces.length, 1, 'nothing of either claimed answer went out before it');
    assert.equal(result.answer, pieces.join(''));
  });
});
