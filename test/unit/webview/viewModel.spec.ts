import assert from 'node:assert/strict';
import { WINDOW_MINUTES } from '../../../src/core/guards/costMonitor';
import { costChart, costSummary, rateView, topTools } from '../../../src/webview/costView';
import { argumentsText, formatBytes, formatMs, MAX_ARGUMENT_CHARS } from '../../../src/webview/format';
import { serverRows } from '../../../src/webview/serverView';
import { barFraction, scoreScale, selectionView, stageLabel, timingRows, tokenRatio, turnLabel, warningRows } from '../../../src/webview/viewModel';
import { costSnapshot, HOSTILE_DESCRIPTION, sampleSelection, sampleTurn } from './fixtures';

const SIZE = { width: 600, height: 120 };

describe('panel view model', () => {
  describe('selection', () => {
    it('names the stages as people read them', () => {
      assert.equal(stageLabel('embedding'), 'embedding');
      assert.equal(stageLabel('keyword:memory'), 'keyword route memory');
      assert.equal(stageLabel('keyword:lexical'), 'lexical');
      assert.equal(stageLabel('sticky:4'), 'sticky from turn 4');
      assert.equal(stageLabel('required'), 'pinned');
      assert.equal(stageLabel('core'), 'core');
      assert.equal(stageLabel('general:file_write'), 'unnamed need: file write');
      assert.equal(stageLabel('companion'), 'finds the item first');
      assert.equal(stageLabel('page'), 'works the page');
      assert.equal(stageLabel('clause'), 'best for a clause');
      assert.equal(stageLabel('something-new'), 'something-new');
    });

    it('draws cosine bars on [min(0, lowest), 1], without a line: the count follows the fused scores', () => {
      const view = selectionView(sampleSelection());
      // The lowest cosine in the ranking is -0.2, so the scale is [-0.2, 1].
      assert.equal(view.thresholdLine, undefined);
      const [first, second, sticky] = view.tools;
      assert.ok(Math.abs(first!.bar! - (0.62 + 0.2) / 1.2) < 1e-9);
      assert.ok(first!.bar! > second!.bar!);
      assert.equal(first!.aboveThreshold, undefined);
      assert.equal(sticky!.bar, undefined, 'a sticky tool with no score has no bar');
      assert.equal(first!.scoreText, 'cosine 0.62');
      assert.deepEqual(first!.stages, ['embedding', 'keyword route memory']);
      assert.deepEqual(sticky!.stages, ['sticky from turn 2']);
      assert.equal(view.thresholdText, '');
    });

    it('normalises fused scores between the lowest and highest when there are no cosines (keyword-only)', () => {
      const s = sampleSelection({
        method: 'keyword-only',
        tools: [
          { name: 'a', score: 2, stages: ['keyword:lexical'], tier: 2, reason: 'r' },
          { name: 'b', score: 0, stages: ['keyword:lexical'], tier: 2, reason: 'r' },
        ],
        ranking: [
          { name: 'a', score: 2 },
          { name: 'b', score: 0 },
          { name: 'c', score: -2 },
        ],
        dropped: [],
      });
      const scale = scoreScale(s);
      assert.deepEqual(scale, { kind: 'score', min: -2, max: 2 });
      const view = selectionView({ ...s, threshold: 0 });
      assert.equal(view.thresholdLine, 0.5, 'the line sits at the cutoff');
      assert.equal(view.thresholdText, 'cutoff 0.00');
      assert.deepEqual(
        view.tools.map((t) => t.aboveThreshold),
        [true, true],
      );
      assert.deepEqual(
        view.tools.map((t) => t.bar),
        [1, 0.5],
      );
      assert.equal(view.tools[0]!.scoreText, 'score 2.00');
    });

    it('has no bars when nothing was scored, and a flat scale fills the bar', () => {
      const none = sampleSelection({ tools: [{ name: 'a', stages: ['core'], tier: 1, reason: 'core' }], ranking: [], dropped: [] });
      assert.deepEqual(scoreScale(none), { kind: 'none' });
      assert.equal(selectionView(none).tools[0]!.bar, undefined);
      assert.equal(barFraction({ kind: 'score', min: 1, max: 1 }, 1), 1);
      assert.equal(barFraction({ kind: 'cosine', min: 0, max: 1 }, 5), 1);
      assert.equal(barFraction({ kind: 'cosine', min: 0, max: 1 }, Number.NaN), undefined);
    });

    it('lists the dropped tools with why, the token ratio and the stage timings', () => {
      const view = selectionView(sampleSelection());
      assert.deepEqual(
        view.dropped.map((d) => [d.name, d.by, d.scoreText]),
        [
          ['memory_delete_entities', 'destructive', 'score 0.90'],
          ['everything_add', 'over the cap', ''],
        ],
      );
      assert.equal(view.tokens.ratio, 0.25);
      assert.equal(view.tokens.text, '~250 of 1,000 tokens of tool definitions (25%)');
      assert.deepEqual(
        view.timings.map((t) => [t.stage, t.text, t.fraction]),
        [
          ['embed', '13 ms', 1],
          ['lexical', '0.8 ms', 0.8 / 12.5],
          ['rank', '0.3 ms', 0.25 / 12.5],
        ],
      );
    });

    it('says which typos were read as other words, and nothing when the prompt was read as typed', () => {
      assert.equal(selectionView(sampleSelection()).readAs, undefined);
      const view = selectionView({ ...sampleSelection(), readAs: [{ from: 'hirng', to: 'hiring' }, { from: 'ordres', to: 'orders' }] });
      assert.equal(view.readAs, 'read "hirng" as "hiring", "ordres" as "orders"');
    });

    it('passes untrusted descriptions through as plain strings (main.ts renders them with textContent)', () => {
      const view = selectionView(sampleSelection(), { memory_create_entities: HOSTILE_DESCRIPTION });
      assert.equal(view.tools[0]!.description, HOSTILE_DESCRIPTION);
      assert.equal(view.tools[1]!.description, undefined);
    });

    it('handles an empty catalogue and odd timings', () => {
      assert.equal(tokenRatio({ selected: 0, catalogue: 0 }).ratio, 0);
      assert.equal(tokenRatio({ selected: 50, catalogue: 10 }).ratio, 1);
      assert.deepEqual(timingRows({ a: -1, b: Number.NaN }), []);
      assert.deepEqual(
        timingRows({ a: 0 }).map((t) => t.fraction),
        [0],
      );
    });

    it('labels turns with a one-line, shortened prompt', () => {
      assert.equal(turnLabel({ turn: 3, prompt: 'find\n  my   notes' }), 'Turn 3: find my notes');
      assert.ok(turnLabel({ turn: 1, prompt: 'x'.repeat(200) }).endsWith('…'));
    });
  });

  describe('cost window', () => {
    it('draws 60 stacked bars (prompt below completion) on the tokens-a-minute scale', () => {
      const snapshot = costSnapshot({ hourlyTokenCap: 0, spikeMultiplier: 0 }, (cost) => cost.record({ promptTokens: 900, completionTokens: 100 }));
      const chart = costChart(snapshot, SIZE);
      assert.equal(chart.bars.length, WINDOW_MINUTES);
      assert.equal(chart.bars[0]!.x, 0);
      assert.equal(chart.bars[59]!.x, (59 * SIZE.width) / 60);
      const last = chart.bars[59]!;
      assert.ok(Math.abs(chart.maxPerMinute - 1000 * 1.1) < 1e-9, 'headroom above the tallest bar');
      assert.ok(Math.abs(last.promptHeight - (900 / 1100) * SIZE.height) < 1e-9);
      assert.ok(Math.abs(last.completionHeight - (100 / 1100) * SIZE.height) < 1e-9);
      assert.ok(Math.abs(last.promptY + last.promptHeight - SIZE.height) < 1e-9, 'prompt tokens sit on the baseline');
      assert.ok(Math.abs(last.completionY + last.completionHeight - last.promptY) < 1e-9, 'completion tokens stack on top');
      assert.equal(chart.bars[0]!.promptHeight, 0);
      assert.match(last.label, /900 prompt \+ 100 completion tokens/);
      assert.equal(chart.capLine, undefined, 'no cap, no cap line');
      assert.equal(chart.spikeLine, undefined);
      assert.equal(chart.baseline, undefined, 'no baseline yet');
    });

    it('draws the cap on the running-total scale, and the baseline and spike limit on the per-minute scale', () => {
      const snapshot = costSnapshot({ hourlyTokenCap: 10_000, spikeMultiplier: 3, shortWindowMinutes: 5, minimumBaselineTokensPerMinute: 100 }, (cost, clock) => {
        for (let i = 0; i < 10; i++) {
          cost.record({ promptTokens: 150, completionTokens: 50 });
          clock.advanceMinutes(1);
        }
      });
      const chart = costChart(snapshot, SIZE);
      // Ten minutes of 200; the current minute is empty and in the short window, the baseline is 200/min.
      assert.equal(snapshot.baselineRate, 200);
      assert.ok(chart.baseline && chart.spikeLine && chart.capLine);
      assert.ok(Math.abs(chart.maxPerMinute - 600 * 1.1) < 1e-9, 'the spike limit (3 × 200) sets the scale');
      assert.ok(Math.abs(chart.spikeLine.y - (SIZE.height - (600 / 660) * SIZE.height)) < 1e-9);
      assert.ok(chart.baseline.y > chart.spikeLine.y, 'the baseline is drawn below the spike limit');
      assert.ok(Math.abs(chart.maxCumulative - 11_000) < 1e-9);
      assert.ok(Math.abs(chart.capLine.y - (SIZE.height - (10_000 / 11_000) * SIZE.height)) < 1e-9);
      assert.match(chart.capLine.label, /hourly cap 10,000 tokens/);
      assert.match(chart.spikeLine.label, /600 tokens\/min \(×3\)/);
      assert.equal(chart.shortWindowX, (55 * SIZE.width) / 60);
      const points = chart.cumulativePoints.split(' ');
      assert.equal(points.length, 60);
      assert.ok(points.at(-1)!.endsWith(`,${Math.round((SIZE.height - (2000 / 11_000) * SIZE.height) * 10) / 10}`));
    });

    it('reports the short-window rate against the baseline and the rule in force', () => {
      const cold = rateView(costSnapshot({ minimumBaselineTokensPerMinute: 1000 }, (cost) => cost.record({ promptTokens: 500, completionTokens: 0 })));
      assert.equal(cold.shortWindowRate, 100);
      assert.equal(cold.ratio, undefined);
      assert.match(cold.text, /Last 5 min: 100 tokens\/min against a baseline of 0/);
      assert.match(cold.ruleText, /waits for a baseline of 1,000/);
      const warm = rateView(
        costSnapshot({ minimumBaselineTokensPerMinute: 10, spikeMultiplier: 3, shortWindowMinutes: 5 }, (cost, clock) => {
          cost.record({ promptTokens: 100, completionTokens: 0 });
          clock.advanceMinutes(10);
          cost.record({ promptTokens: 1000, completionTokens: 0 });
        }),
      );
      assert.equal(warm.baselineRate, 100);
      assert.equal(warm.shortWindowRate, 200);
      assert.equal(warm.ratio, 2);
      assert.ok(Math.abs(warm.ofLimit - 200 / 300) < 1e-9);
      assert.match(warm.ruleText, /Pauses above 300 tokens\/min/);
      assert.match(rateView(costSnapshot({ enabled: false })).ruleText, /guard is off/);
      assert.match(rateView(costSnapshot({ spikeMultiplier: 0 })).ruleText, /spike rule is off/);
    });

    it('shows the paused state with the monitor’s own message', () => {
      const running = costSummary(costSnapshot({ hourlyTokenCap: 1000 }));
      assert.equal(running.paused, false);
      assert.equal(running.capFraction, 0);
      const paused = costSummary(costSnapshot({ hourlyTokenCap: 100 }, (cost) => cost.record({ promptTokens: 90, completionTokens: 30 })));
      assert.equal(paused.paused, true);
      assert.equal(paused.pausedTitle, 'Paused: the hourly cap was reached');
      assert.match(paused.pausedMessage!, /reached the cap of 100/);
      assert.equal(paused.capFraction, 1);
      assert.match(paused.totalText, /120 tokens this hour \(90 prompt, 30 completion\); 120 of the 100 cap counted/);
    });

    it('ranks the top tools with their share and parts', () => {
      const snapshot = costSnapshot({}, (cost) =>
        cost.record({
          promptTokens: 500,
          completionTokens: 0,
          tools: [
            { name: 'a', tokens: 300, part: 'definition' },
            { name: 'a', tokens: 100, part: 'result' },
            { name: 'b', tokens: 100, part: 'arguments' },
          ],
        }),
      );
      const rows = topTools(snapshot);
      assert.deepEqual(
        rows.map((r) => [r.name, r.tokens, r.fraction, r.parts]),
        [
          ['a', 400, 1, 'definitions 300, results 100'],
          ['b', 100, 0.25, 'arguments 100'],
        ],
      );
      assert.deepEqual(topTools(snapshot, 1).length, 1);
    });
  });

  describe('warnings', () => {
    it('lists loop refusals and hallucination retries with turn, tool, arguments, rule and what the model was told, newest first', () => {
      const rows = warningRows([
        sampleTurn(1, { warnings: [{ kind: 'hallucination', phrase: "I've sent", outcome: 'retried' }] }),
        sampleTurn(2, { warnings: [{ kind: 'loop', tool: 'everything_echo', args: { message: 'again' }, rule: 'same-arguments', message: 'Loop detected: do not repeat this call.' }, { kind: 'cost', message: 'The router is paused.' }] }),
      ]);
      assert.deepEqual(
        rows.map((r) => [r.turn, r.kind, r.tool, r.arguments, r.rule]),
        [
          [2, 'loop', 'everything_echo', '{"message":"again"}', 'LOOP_DETECTED: same-arguments'],
          [2, 'cost', '', '', 'cost guard'],
          [1, 'hallucination', '', '', 'claimed action "I\'ve sent" without a tool call'],
        ],
      );
      assert.equal(rows[0]!.told, 'Loop detected: do not repeat this call.');
      assert.equal(rows[2]!.told, 'Asked again with tools required.');
    });

    it('adds refusals from the loop history for turns it has no record of', () => {
      const rows = warningRows([sampleTurn(2)], [
        { turn: 1, calls: [], blocked: [{ tool: 'x', rule: 'empty-results', count: 2, at: 5 }] },
        { turn: 2, calls: [], blocked: [{ tool: 'y', rule: 'same-arguments', count: 3, at: 6 }] },
      ]);
      assert.deepEqual(
        rows.map((r) => [r.turn, r.tool, r.rule]),
        [[1, 'x', 'LOOP_DETECTED: empty-results (after 2)']],
      );
    });

    it('shortens long arguments and copes with unserialisable ones', () => {
      assert.equal(argumentsText({ a: 'x'.repeat(500) }).length, MAX_ARGUMENT_CHARS);
      const cyclic: Record<string, unknown> = {};
      cyclic['self'] = cyclic;
      assert.equal(argumentsText(cyclic), '[object Object]');
      assert.equal(argumentsText('{"raw":1}'), '{"raw":1}');
      assert.equal(argumentsText(undefined), 'undefined');
    });
  });

  describe('servers', () => {
    it('lists servers by name with state, tool count, restarts, and their tools’ latency and size percentiles', () => {
      const rows = serverRows({
        statuses: [
          { name: 'memory', state: 'ready', restarts: 0, toolCount: 9, transport: 'stdio' },
          { name: 'everything', state: 'restarting', restarts: 2, toolCount: 1, reason: 'exited with code 1' },
        ],
        stats: {
          everything_echo: { calls: 4, errors: 1, latencyMs: { p50: 2.5, p95: 1500, p99: 1500 }, bytes: { p50: 120, p95: 4096, p99: 4096 } },
          everything_add: { calls: 9, errors: 0, latencyMs: { p50: 1, p95: 1, p99: 1 }, bytes: { p50: 10, p95: 10, p99: 10 } },
          gone_tool: { calls: 1, errors: 0, latencyMs: { p50: 1, p95: 1, p99: 1 }, bytes: { p50: 1, p95: 1, p99: 1 } },
        },
        toolServers: { everything_echo: 'everything', everything_add: 'everything' },
      });
      assert.deepEqual(
        rows.map((r) => [r.name, r.state, r.tone, r.detail]),
        [
          ['everything', 'restarting', 'busy', '1 tool · 2 restarts'],
          ['memory', 'ready', 'ok', '9 tools · 0 restarts · stdio'],
        ],
      );
      assert.equal(rows[0]!.reason, 'exited with code 1');
      assert.deepEqual(
        rows[0]!.tools.map((t) => [t.name, t.calls, t.errors, t.latency, t.size]),
        [
          ['everything_add', 9, 0, 'p50 1.0 ms · p95 1.0 ms', 'p50 10 B · p95 10 B'],
          ['everything_echo', 4, 1, 'p50 2.5 ms · p95 1.5 s', 'p50 120 B · p95 4.0 KB'],
        ],
      );
      assert.deepEqual(rows[1]!.tools, []);
      assert.deepEqual(rows[0]!.flags, []);
    });

    it('puts each tool’s poisoning flags under its server, most severe first', () => {
      const rows = serverRows({
        statuses: [
          { name: 'evil', state: 'ready', restarts: 0, toolCount: 2 },
          { name: 'memory', state: 'ready', restarts: 0, toolCount: 9 },
        ],
        stats: {},
        toolServers: { evil_add: 'evil', evil_echo: 'evil', memory_read_graph: 'memory' },
        flags: {
          evil_echo: [{ kind: 'hidden-unicode', severity: 'medium', reason: 'description contains 1 zero-width character(s)' }],
          evil_add: [{ kind: 'instruction', severity: 'high', reason: 'description tells the model to keep something from the user', quarantined: true }],
          gone_tool: [{ kind: 'shadowing', severity: 'medium', reason: 'no server any more' }],
        },
      });
      assert.deepEqual(
        rows[0]!.flags.map((f) => [f.tool, f.severity, f.text]),
        [
          ['evil_add', 'high', 'high, quarantined: description tells the model to keep something from the user'],
          ['evil_echo', 'medium', 'medium: description contains 1 zero-width character(s)'],
        ],
      );
      assert.deepEqual(rows[1]!.flags, []);
    });

    it('formats durations and sizes', () => {
      assert.equal(formatMs(0.25), '0.3 ms');
      assert.equal(formatMs(42), '42 ms');
      assert.equal(formatMs(12_345), '12 s');
      assert.equal(formatBytes(3 * 1024 * 1024), '3.0 MB');
    });
  });
});
