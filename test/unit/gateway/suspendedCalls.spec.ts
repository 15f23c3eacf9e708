import assert from 'node:assert/strict';
import type { CallToolResult, ElicitResult } from '@modelcontextprotocol/server';
import type { CallerFeatures } from '../../../src/core/connection/clientFeatures';
import { MAX_PARKED_CALLS, SuspendedCalls, type NextAnswer } from '../../../src/core/gateway/suspendedCalls';

const KEY = { tool: 'toolRouter_callTool', args: 'digest-1' };
const BOTH = { elicit: true, sample: true };
const QUESTION = { message: 'Your name?', requestedSchema: { type: 'object' as const, properties: { name: { type: 'string' as const } } } };

function textOf(answer: NextAnswer): string {
  assert.equal(answer.kind, 'result');
  return ((answer.result as CallToolResult).content[0] as { text: string }).text;
}

/** A routed call that asks one question and returns what it was told, the way a server's tool would. */
function asking(seen: { signal?: AbortSignal; answers: ElicitResult[] }) {
  return async (caller: CallerFeatures, signal: AbortSignal): Promise<CallToolResult> => {
    seen.signal = signal;
    assert.ok(caller.elicit, 'the call is given the client’s elicitation');
    const answer = await caller.elicit(QUESTION, new AbortController().signal);
    seen.answers.push(answer);
    return { content: [{ type: 'text', text: `${answer.action}:${String(answer.content?.['name'] ?? '')}` }] };
  };
}

describe('SuspendedCalls (a routed server’s questions parked for a 2026-07-28 client)', () => {
  const live = new AbortController().signal;
  let calls: SuspendedCalls;
  afterEach(() => calls.dispose());

  it('returns the question, then the result once the retry answers it', async () => {
    calls = new SuspendedCalls(60_000);
    const seen = { answers: [] as ElicitResult[] };
    const first = await calls.start(KEY, BOTH, live, asking(seen));
    assert.equal(first.kind, 'questions');
    if (first.kind !== 'questions') return;
    assert.deepEqual(Object.keys(first.inputRequests), ['q1']);
    assert.equal(first.state.round, 1);
    assert.equal(calls.size, 1);
    const done = await calls.resume(first.state, KEY, { q1: { action: 'accept', content: { name: 'Ada' } } }, live);
    assert.equal(textOf(done), 'accept:Ada');
    assert.equal(calls.size, 0, 'a finished call is no longer parked');
  });

  it('passes the server\'s progress to the request waiting on the call now, and none between requests', async () => {
    calls = new SuspendedCalls(60_000);
    const first: number[] = [];
    const retry: number[] = [];
    let report!: (progress: number) => void;
    const run = async (caller: CallerFeatures, _signal: AbortSignal, onProgress?: (p: { progress: number }) => void): Promise<CallToolResult> => {
      report = (progress) => onProgress!({ progress });
      report(1);
      await caller.elicit!(QUESTION, new AbortController().signal);
      report(3);
      return { content: [{ type: 'text', text: 'done' }] };
    };
    const asked = await calls.start(KEY, BOTH, live, run, (p) => first.push(p.progress));
    assert.equal(asked.kind, 'questions');
    if (asked.kind !== 'questions') return;
    report(2); // between the two requests: nobody is waiting to hear it
    const done = await calls.resume(asked.state, KEY, { q1: { action: 'accept', content: { name: 'Ada' } } }, live, (p) => retry.push(p.progress));
    assert.equal(textOf(done), 'done');
    assert.deepEqual(first, [1]);
    assert.deepEqual(retry, [3]);
  });

  it('asks again when the retry leaves the question unanswered, and refuses an answer used already', async () => {
    calls = new SuspendedCalls(60_000);
    const first = await calls.start(KEY, BOTH, live, asking({ answers: [] }));
    assert.equal(first.kind, 'questions');
    if (first.kind !== 'questions') return;
    const again = await calls.resume(first.state, KEY, {}, live);
    assert.equal(again.kind, 'questions');
    if (again.kind !== 'questions') return;
    assert.deepEqual(Object.keys(again.inputRequests), ['q1']);
    assert.equal(again.state.round, 2);
    const stale = await calls.resume(first.state, KEY, { q1: { action: 'accept', content: { name: 'Eve' } } }, live);
    assert.match(textOf(stale), /used already/);
    assert.equal(textOf(await calls.resume(again.state, KEY, { q1: { action: 'decline' } }, live)), 'decline:');
  });

  it('refuses an answer for another call, and one whose call has ended', async () => {
    calls = new SuspendedCalls(60_000);
    const first = await calls.start(KEY, BOTH, live, asking({ answers: [] }));
    if (first.kind !== 'questions') return assert.fail('expected a question');
    assert.match(textOf(await calls.resume(first.state, { ...KEY, args: 'digest-2' }, { q1: { action: 'accept' } }, live)), /for another call/);
    assert.match(textOf(await calls.resume({ ...first.state, id: 'no-such-call' }, KEY, { q1: { action: 'accept' } }, live)), /has ended/);
  });

  it('cancels an unanswered call after the expiry: the question is answered cancel and the call aborted', async () => {
    calls = new SuspendedCalls(30);
    const seen: { signal?: AbortSignal; answers: ElicitResult[] } = { answers: [] };
    const first = await calls.start(KEY, BOTH, live, asking(seen));
    assert.equal(first.kind, 'questions');
    await new Promise((resolve) => setTimeout(resolve, 80));
    assert.deepEqual(seen.answers, [{ action: 'cancel' }]);
    assert.equal(seen.signal?.aborted, true);
    assert.equal(calls.size, 0);
    if (first.kind === 'questions') assert.match(textOf(await calls.resume(first.state, KEY, { q1: { action: 'accept' } }, live)), /has ended/);
  });

  it('cancels the call when its client gives up waiting', async () => {
    calls = new SuspendedCalls(60_000);
    const request = new AbortController();
    let runSignal: AbortSignal | undefined;
    const pending = calls.start(KEY, BOTH, request.signal, (_caller, signal) => {
      runSignal = signal;
      return new Promise<CallToolResult>((resolve) => signal.addEventListener('abort', () => resolve({ content: [{ type: 'text', text: 'aborted' }], isError: true })));
    });
    request.abort();
    assert.equal(textOf(await pending), 'aborted');
    assert.equal(runSignal?.aborted, true);
  });

  it('gives the call no client features when the client declared none, or when too many calls wait', async () => {
    calls = new SuspendedCalls(60_000);
    const offered: CallerFeatures[] = [];
    const plain = await calls.start(KEY, { elicit: false, sample: false }, live, async (caller) => {
      offered.push(caller);
      return { content: [{ type: 'text', text: 'ran' }] };
    });
    assert.equal(textOf(plain), 'ran');
    assert.deepEqual(offered, [{}]);
    for (let i = 0; i < MAX_PARKED_CALLS; i++) assert.equal((await calls.start(KEY, BOTH, live, asking({ answers: [] }))).kind, 'questions');
    const overflow = await calls.start(KEY, BOTH, live, async (caller) => ({ content: [{ type: 'text', text: caller.elicit ? 'parked' : 'host answers' }] }));
    assert.equal(textOf(overflow), 'host answers');
  });

  it('passes a sampling request on as createMessage and hands back the client’s message', async () => {
    calls = new SuspendedCalls(60_000);
    const first = await calls.start(KEY, BOTH, live, async (caller) => {
      const reply = await caller.sample!({ messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5 }, new AbortController().signal);
      return { content: [{ type: 'text', text: `model said ${(reply.content as { text: string }).text}` }] };
    });
    if (first.kind !== 'questions') return assert.fail('expected a question');
    assert.equal((first.inputRequests['q1'] as { method: string }).method, 'sampling/createMessage');
    const done = await calls.resume(first.state, KEY, { q1: { role: 'assistant', content: { type: 'text', text: 'hello' }, model: 'fake' } }, live);
    assert.equal(textOf(done), 'model said hello');
  });
});
