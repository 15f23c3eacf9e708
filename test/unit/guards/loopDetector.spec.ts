import assert from 'node:assert/strict';
import { exitCodeFor, type CallEnvelope } from '../../../src/core/router/callEnvelope';
import {
  DEFAULT_EMPTY_RESULTS_THRESHOLD,
  DEFAULT_LOOP_HISTORY_TURNS,
  DEFAULT_LOOP_THRESHOLDS,
  DEFAULT_SAME_ARGS_THRESHOLD,
  LoopDetector,
  MAX_LOGGED_CALLS_PER_TURN,
  argumentsKey,
  canonicalArgs,
  digestResult,
  isEmptyText,
  isEmptyToolResult,
  isEmptyValue,
  loopDetectedEnvelope,
  resultFactsFor,
  type LoopBlock,
  type LoopDecision,
} from '../../../src/core/guards/loopDetector';

function blocked(decision: LoopDecision): LoopBlock {
  assert.equal(decision.allow, false, 'expected the call to be refused');
  return decision as LoopBlock;
}

/** Checks, then (if allowed) records a call with the given result: what the participant does per call. */
function call(detector: LoopDetector, tool: string, args: unknown, result: string, isEmpty = false): LoopDecision {
  const decision = detector.check(tool, args);
  if (decision.allow) detector.record(tool, args, digestResult(result), isEmpty);
  return decision;
}

const meta = { latencyMs: 1, bytes: 10, server: 's', tool: 't' };
const ok = (text: string, extra: Partial<CallEnvelope['meta']> = {}): CallEnvelope => ({ ok: true, content: [{ type: 'text', text }], meta: { ...meta, ...extra } });

describe('loop detector', () => {
  describe('defaults', () => {
    it('are the seed 001 rules: same call 3 times, empty results 2 times, 5 turns of history', () => {
      assert.equal(DEFAULT_SAME_ARGS_THRESHOLD, 3);
      assert.equal(DEFAULT_EMPTY_RESULTS_THRESHOLD, 2);
      assert.equal(DEFAULT_LOOP_HISTORY_TURNS, 5);
      assert.deepEqual(DEFAULT_LOOP_THRESHOLDS, { sameArgs: 3, emptyResults: 2 });
      assert.deepEqual(new LoopDetector().thresholdsFor('any_tool'), DEFAULT_LOOP_THRESHOLDS);
    });
  });

  describe('same arguments', () => {
    it('runs a call 3 times and refuses the 4th when each returned the same result', () => {
      const d = new LoopDetector();
      d.startTurn(1);
      for (let i = 0; i < 3; i++) assert.deepEqual(call(d, 'kb_search', { q: 'pricing' }, 'same answer'), { allow: true });
      const block = blocked(d.check('kb_search', { q: 'pricing' }));
      assert.equal(block.rule, 'same-arguments');
      assert.equal(block.tool, 'kb_search');
      assert.equal(block.count, 3);
      assert.equal(block.threshold, 3);
    });

    it('says what happened, naming the tool and the count, and what to do instead', () => {
      const d = new LoopDetector();
      for (let i = 0; i < 3; i++) call(d, 'kb_search', { q: 'x' }, 'r');
      const { message } = blocked(d.check('kb_search', { q: 'x' }));
      assert.match(message, /^Loop detected: kb_search was already called 3 times in this turn with these same arguments and returned the same result each time, so it was not called again\./);
      assert.match(message, /change the arguments/);
      assert.match(message, /use another tool/);
      assert.match(message, /answer the user with what you have/);
    });

    it('keeps refusing while nothing changes, and logs each refusal', () => {
      const d = new LoopDetector();
      d.startTurn(1);
      for (let i = 0; i < 3; i++) call(d, 'kb_search', { q: 'x' }, 'r');
      blocked(d.check('kb_search', { q: 'x' }));
      blocked(d.check('kb_search', { q: 'x' }));
      const [turn] = d.history();
      assert.equal(turn!.calls.length, 3);
      assert.deepEqual(turn!.blocked.map((b) => [b.tool, b.rule, b.count]), [['kb_search', 'same-arguments', 3], ['kb_search', 'same-arguments', 3]]);
    });

    it('allows two identical calls and a third', () => {
      const d = new LoopDetector();
      call(d, 'kb_search', { q: 'x' }, 'r');
      call(d, 'kb_search', { q: 'x' }, 'r');
      assert.deepEqual(d.check('kb_search', { q: 'x' }), { allow: true });
    });

    it('is progress-aware: polling that gets a new result each time is never refused', () => {
      const d = new LoopDetector();
      for (let i = 0; i < 20; i++) assert.equal(call(d, 'jobs_status', { id: 7 }, `progress ${i * 5}%`).allow, true);
    });

    it('counts only the current run of identical results: a new result starts the count again', () => {
      const d = new LoopDetector();
      call(d, 'jobs_status', { id: 7 }, 'pending');
      call(d, 'jobs_status', { id: 7 }, 'pending');
      call(d, 'jobs_status', { id: 7 }, 'done'); // progress: the count is 1 again
      call(d, 'jobs_status', { id: 7 }, 'done');
      assert.equal(d.check('jobs_status', { id: 7 }).allow, true);
      call(d, 'jobs_status', { id: 7 }, 'done');
      assert.equal(blocked(d.check('jobs_status', { id: 7 })).count, 3);
    });

    it('counts each set of arguments, and each tool, on its own', () => {
      const d = new LoopDetector();
      for (let i = 0; i < 3; i++) call(d, 'kb_search', { q: 'a' }, 'r');
      assert.equal(d.check('kb_search', { q: 'b' }).allow, true);
      assert.equal(d.check('kb_get', { q: 'a' }).allow, true);
      assert.equal(d.check('kb_search', { q: 'a' }).allow, false);
    });

    it('sees through key order, nesting order and whitespace', () => {
      const d = new LoopDetector();
      call(d, 'search', { query: 'open  issues', filter: { state: 'open', label: 'bug' } }, 'r');
      call(d, 'search', { filter: { label: 'bug', state: 'open' }, query: ' open issues ' }, 'r');
      call(d, 'search', '{"query":"open\\tissues","filter":{"label":"bug","state":"open"}}', 'r');
      assert.equal(blocked(d.check('search', { query: 'open issues', filter: { state: 'open', label: 'bug' } })).count, 3);
    });

    it('does not over-normalise: types, case and array order still make a different call', () => {
      const d = new LoopDetector();
      for (let i = 0; i < 3; i++) call(d, 'get', { id: 5, tags: ['a', 'b'], name: 'Bob' }, 'r');
      assert.equal(d.check('get', { id: '5', tags: ['a', 'b'], name: 'Bob' }).allow, true);
      assert.equal(d.check('get', { id: 5, tags: ['b', 'a'], name: 'Bob' }).allow, true);
      assert.equal(d.check('get', { id: 5, tags: ['a', 'b'], name: 'bob' }).allow, true);
      assert.equal(d.check('get', { id: 5, tags: ['a', 'b'], name: 'Bob' }).allow, false);
    });

    it('counts repeated errors too: the same failure three times is a loop', () => {
      const d = new LoopDetector();
      const failed: CallEnvelope = { ok: false, error: { type: 'TOOL_ERROR', message: 'rate limited', retryable: true }, meta };
      for (let i = 0; i < 3; i++) {
        const facts = resultFactsFor(failed);
        assert.equal(facts.isEmpty, false);
        d.record('api_get', {}, facts.digest, facts.isEmpty);
      }
      assert.equal(blocked(d.check('api_get', {})).rule, 'same-arguments');
    });
  });

  describe('empty results', () => {
    it('refuses the next call of a tool that returned nothing twice in a row, whatever its arguments', () => {
      const d = new LoopDetector();
      d.startTurn(1);
      assert.equal(call(d, 'kb_search', { q: 'unicorn' }, 'No results found', true).allow, true);
      assert.equal(call(d, 'kb_search', { q: 'unicorns' }, '[]', true).allow, true);
      const block = blocked(d.check('kb_search', { q: 'pegasus' }));
      assert.equal(block.rule, 'empty-results');
      assert.equal(block.count, 2);
      assert.equal(block.threshold, 2);
      assert.match(block.message, /^Loop detected: kb_search returned an empty result 2 times in a row in this turn, so it was not called again\. The data may not exist\./);
      assert.match(block.message, /use another tool, or answer the user with what you have and say what was not found/);
    });

    it('lets one empty result pass, and other tools go on', () => {
      const d = new LoopDetector();
      call(d, 'kb_search', { q: 'a' }, '', true);
      assert.equal(d.check('kb_search', { q: 'b' }).allow, true);
      call(d, 'kb_search', { q: 'b' }, '', true);
      assert.equal(d.check('kb_search', { q: 'c' }).allow, false);
      assert.equal(d.check('web_search', { q: 'c' }).allow, true);
    });

    it('starts counting again after a result with something in it', () => {
      const d = new LoopDetector();
      call(d, 'kb_search', { q: 'a' }, '', true);
      call(d, 'kb_search', { q: 'b' }, 'one hit', false);
      call(d, 'kb_search', { q: 'c' }, '', true);
      assert.equal(d.check('kb_search', { q: 'd' }).allow, true);
    });
  });

  describe('turns', () => {
    it('counts per turn: a new turn starts clean', () => {
      const d = new LoopDetector();
      d.startTurn(1);
      for (let i = 0; i < 3; i++) call(d, 'kb_search', { q: 'x' }, 'r');
      call(d, 'kb_get', { id: 1 }, '', true);
      call(d, 'kb_get', { id: 2 }, '', true);
      assert.equal(d.check('kb_search', { q: 'x' }).allow, false);
      d.startTurn(2);
      assert.equal(d.currentTurn, 2);
      assert.equal(d.check('kb_search', { q: 'x' }).allow, true);
      assert.equal(d.check('kb_get', { id: 3 }).allow, true);
    });

    it('returning to the same turn (the hallucination retry) keeps its counts', () => {
      const d = new LoopDetector();
      d.startTurn(4);
      for (let i = 0; i < 3; i++) call(d, 'kb_search', { q: 'x' }, 'r');
      d.startTurn(4);
      assert.equal(d.check('kb_search', { q: 'x' }).allow, false);
    });

    it('keeps the last 5 turns of history, oldest first', () => {
      const now = 1000;
      const d = new LoopDetector({ now: () => now });
      for (let turn = 1; turn <= 7; turn++) {
        d.startTurn(turn);
        call(d, 'kb_search', { q: `turn ${turn}` }, 'r');
      }
      const history = d.history();
      assert.deepEqual(history.map((t) => t.turn), [3, 4, 5, 6, 7]);
      assert.equal(history[4]!.calls[0]!.tool, 'kb_search');
      assert.equal(history[4]!.calls[0]!.argsKey, argumentsKey({ q: 'turn 7' }));
      assert.equal(history[4]!.calls[0]!.at, 1000);
    });

    it('counts calls made before any startTurn as turn 0', () => {
      const d = new LoopDetector();
      call(d, 'kb_search', { q: 'x' }, 'r');
      assert.equal(d.currentTurn, 0);
      assert.deepEqual(d.history().map((t) => [t.turn, t.calls.length]), [[0, 1]]);
      d.startTurn(1);
      assert.deepEqual(d.history().map((t) => t.turn), [0, 1]);
    });

    it('keeps a configured number of turns', () => {
      const d = new LoopDetector({ historyTurns: 2 });
      for (let turn = 1; turn <= 4; turn++) d.startTurn(turn);
      assert.deepEqual(d.history().map((t) => t.turn), [3, 4]);
    });

    it('treats a lower turn number as a new chat and drops the turns after it', () => {
      const d = new LoopDetector();
      d.startTurn(5);
      d.startTurn(6);
      d.startTurn(1);
      assert.deepEqual(d.history().map((t) => t.turn), [1]);
    });

    it('clear() forgets everything', () => {
      const d = new LoopDetector();
      d.startTurn(3);
      for (let i = 0; i < 3; i++) call(d, 'kb_search', { q: 'x' }, 'r');
      d.clear();
      assert.equal(d.currentTurn, 0);
      assert.deepEqual(d.history(), []);
      assert.equal(d.check('kb_search', { q: 'x' }).allow, true);
    });

    it('bounds the call log of a turn, while the rules keep counting', () => {
      const d = new LoopDetector();
      for (let i = 0; i < MAX_LOGGED_CALLS_PER_TURN + 50; i++) call(d, 'jobs_status', { id: 1 }, `p${i}`);
      assert.equal(d.history()[0]!.calls.length, MAX_LOGGED_CALLS_PER_TURN);
    });
  });

  describe('per-tool thresholds', () => {
    it('takes an exact name over a glob, the first matching glob over later ones, and defaults for the rest', () => {
      const d = new LoopDetector({
        defaults: { sameArgs: 4 },
        perTool: { 'jobs_*': { sameArgs: 10 }, 'jobs_status': { sameArgs: 20, emptyResults: 5 }, 'j*': { sameArgs: 2 }, 'kb_search': { emptyResults: 3 } },
      });
      assert.deepEqual(d.issues, []);
      assert.deepEqual(d.thresholdsFor('jobs_status'), { sameArgs: 20, emptyResults: 5 });
      assert.deepEqual(d.thresholdsFor('jobs_list'), { sameArgs: 10, emptyResults: 2 });
      assert.deepEqual(d.thresholdsFor('jira_get'), { sameArgs: 2, emptyResults: 2 });
      assert.deepEqual(d.thresholdsFor('kb_search'), { sameArgs: 4, emptyResults: 3 });
      assert.deepEqual(d.thresholdsFor('other'), { sameArgs: 4, emptyResults: 2 });
    });

    it('applies them to the rules', () => {
      const d = new LoopDetector({ perTool: { 'jobs_*': { sameArgs: 5 }, 'kb_*': { emptyResults: 1 } } });
      for (let i = 0; i < 4; i++) call(d, 'jobs_status', { id: 1 }, 'pending');
      assert.equal(d.check('jobs_status', { id: 1 }).allow, true);
      call(d, 'jobs_status', { id: 1 }, 'pending');
      const block = blocked(d.check('jobs_status', { id: 1 }));
      assert.equal(block.count, 5);
      assert.equal(block.threshold, 5);
      call(d, 'kb_search', { q: 'a' }, '', true);
      assert.match(blocked(d.check('kb_search', { q: 'b' })).message, /returned an empty result once in a row/);
    });

    it('turns a rule off with 0', () => {
      const d = new LoopDetector({ perTool: { poll_status: { sameArgs: 0, emptyResults: 0 } } });
      for (let i = 0; i < 10; i++) assert.equal(call(d, 'poll_status', {}, '', true).allow, true);
    });

    it('reports bad values and keeps the defaults for them', () => {
      const d = new LoopDetector({ defaults: { sameArgs: -1 }, historyTurns: 0, perTool: { a_b: { emptyResults: 1.5 } } });
      assert.deepEqual(d.thresholdsFor('a_b'), DEFAULT_LOOP_THRESHOLDS);
      assert.equal(d.issues.length, 3);
      assert.match(d.issues[0]!, /historyTurns must be a whole number of at least 1, got 0; using 5\./);
      assert.match(d.issues[1]!, /defaults\.sameArgs must be a whole number of at least 0, got -1; using 3\./);
      assert.match(d.issues[2]!, /perTool\["a_b"\]\.emptyResults must be a whole number/);
    });
  });

  describe('the LOOP_DETECTED envelope', () => {
    it('is an error envelope the model reads, refused before the server (exit code 2)', () => {
      const d = new LoopDetector();
      for (let i = 0; i < 3; i++) call(d, 'kb_search', { q: 'x' }, 'r');
      const envelope = loopDetectedEnvelope(blocked(d.check('kb_search', { q: 'x' })), { server: 'kb', tool: 'search', exposedName: 'kb_search' });
      assert.equal(envelope.ok, false);
      if (envelope.ok) return;
      assert.equal(envelope.error.type, 'LOOP_DETECTED');
      assert.equal(envelope.error.retryable, false);
      assert.match(envelope.error.message, /^Loop detected: kb_search/);
      assert.deepEqual(envelope.meta, { latencyMs: 0, bytes: 0, server: 'kb', tool: 'search', exposedName: 'kb_search' });
      assert.equal(exitCodeFor(envelope), 2);
    });
  });

  describe('canonical arguments', () => {
    it('sorts keys recursively, trims and collapses whitespace in strings, and keeps everything else', () => {
      assert.deepEqual(canonicalArgs({ b: { y: ' two  words ', x: [3, ' a\n b '] }, a: 1, c: undefined, d: null }), { a: 1, b: { x: [3, 'a b'], y: 'two words' }, d: null });
      assert.equal(JSON.stringify(canonicalArgs({ b: 1, a: 2 })), '{"a":2,"b":1}');
    });

    it('parses arguments given as JSON text, and leaves other strings as strings', () => {
      assert.deepEqual(canonicalArgs(' {"b": 1, "a": "x"} '), { a: 'x', b: 1 });
      assert.equal(canonicalArgs('{not json'), '{not json');
      assert.equal(canonicalArgs('  plain   text '), 'plain text');
    });

    it('gives equal keys for equivalent arguments and different keys otherwise', () => {
      assert.equal(argumentsKey({ a: 1, b: 'x y' }), argumentsKey({ b: ' x  y', a: 1 }));
      assert.notEqual(argumentsKey({ a: 1 }), argumentsKey({ a: '1' }));
      assert.equal(argumentsKey(undefined), argumentsKey(undefined));
      assert.notEqual(argumentsKey({}), argumentsKey(undefined));
    });

    it('does not collapse whitespace in results: a result that changed is progress', () => {
      assert.notEqual(digestResult('a  b'), digestResult('a b'));
      assert.equal(digestResult({ x: 1, y: 2 }), digestResult({ y: 2, x: 1 }));
    });
  });

  describe('empty results: the definition', () => {
    const EMPTY_TEXTS = ['', '   \n\t', 'null', 'NULL', 'undefined', 'None', 'n/a', 'empty', '[]', '{}', ' [ ] ', '""', '{"results": []}', '{"items": [], "next": null}', '[{}]', 'no results', 'No results found.', 'No matches found', 'No matching records found for "acme".', '0 items found', 'Zero results', 'Nothing found', 'Nothing was found.', 'Not found', 'No files found in /tmp', 'The search returned no results', 'Found 0 results.'];
    const NOT_EMPTY_TEXTS = ['0', 'false', 'ok', 'No', 'No files changed, 3 files added.', 'No results found, but here are 3 similar items: a, b, c', '{"results": [], "total": 0}', '[0]', '{"ok": true}', 'Results: none of the 3 servers failed.', `No results found for ${'x'.repeat(400)}`];

    for (const text of EMPTY_TEXTS) it(`empty: ${JSON.stringify(text)}`, () => assert.equal(isEmptyText(text), true));
    for (const text of NOT_EMPTY_TEXTS) it(`not empty: ${JSON.stringify(text.slice(0, 60))}`, () => assert.equal(isEmptyText(text), false));

    it('reads JSON values structurally', () => {
      assert.equal(isEmptyValue(null), true);
      assert.equal(isEmptyValue(undefined), true);
      assert.equal(isEmptyValue({ a: { b: [] } }), true);
      assert.equal(isEmptyValue({ a: { b: [1] } }), false);
      assert.equal(isEmptyValue(0), false);
      assert.equal(isEmptyValue(false), false);
    });

    it('reads tool results: text blocks that are all empty, and no structured content with anything in it', () => {
      assert.equal(isEmptyToolResult({ content: [] }), true);
      assert.equal(isEmptyToolResult({}), true);
      assert.equal(isEmptyToolResult({ content: [{ type: 'text', text: '' }, { type: 'text', text: 'No results' }] }), true);
      assert.equal(isEmptyToolResult({ content: [], structuredContent: { items: [] } }), true);
      assert.equal(isEmptyToolResult({ content: [], structuredContent: { items: [1] } }), false);
      assert.equal(isEmptyToolResult({ content: [{ type: 'text', text: '' }, { type: 'image', data: 'AAAA', mimeType: 'image/png' }] }), false);
      assert.equal(isEmptyToolResult({ content: [{ type: 'resource_link', uri: 'file:///a' }] }), false);
    });

    it('gives the facts of an envelope without its timing, and never calls an error empty', () => {
      assert.deepEqual(resultFactsFor(ok('same', { latencyMs: 1 })), resultFactsFor(ok('same', { latencyMs: 99, bytes: 1 })));
      assert.notEqual(resultFactsFor(ok('one')).digest, resultFactsFor(ok('two')).digest);
      assert.equal(resultFactsFor(ok('No results found')).isEmpty, true);
      assert.equal(resultFactsFor({ ok: true, content: [], structuredContent: { n: 1 }, meta }).isEmpty, false);
      const error: CallEnvelope = { ok: false, error: { type: 'TOOL_ERROR', message: 'No results found', retryable: false }, meta };
      assert.equal(resultFactsFor(error).isEmpty, false);
      assert.notEqual(resultFactsFor(error).digest, resultFactsFor(ok('No results found')).digest);
    });
  });
});
