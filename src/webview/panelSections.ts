/**
 * The panel's cost, warnings and servers sections, built from the data alone (main.ts owns the state
 * and the selection section). Every string from a server is set as text, never as HTML.
 */
import type { CostSnapshot } from '../core/guards/costMonitor';
import type { LoopTurnHistory } from '../core/guards/loopDetector';
import { bar, button, el, section, svg } from './dom';
import type { ServersView, TurnView } from './protocol';
import { costChart, costSummary, rateView, topTools, type CostChartView } from './costView';
import { serverRows } from './serverView';
import { warningRows } from './viewModel';

const CHART_SIZE = { width: 600, height: 140 } as const;

export function renderCost(snapshot: CostSnapshot): HTMLElement {
  const summary = costSummary(snapshot);
  const rate = rateView(snapshot);
  const chart = costChart(snapshot, CHART_SIZE);
  const controls = el(
    'div',
    { class: 'row buttons' },
    button('Resume', 'resume', { label: 'Resume the router', id: 'resume-button', primary: true, unavailable: !summary.paused }),
    button('Reset window', 'resetCostWindow', { label: 'Reset window: forget this hour of usage', id: 'reset-button' }),
  );
  // Keyed by when the pause began, so one pause is one alert however often the numbers update.
  const paused = summary.paused
    ? el('div', { class: 'paused', attrs: { id: 'cost-paused', role: 'alert', 'data-key': `pause-${summary.pausedAt ?? 0}` } }, el('strong', { text: summary.pausedTitle ?? 'Paused' }), el('p', { text: summary.pausedMessage ?? '' }))
    : el('p', { class: 'ok', text: 'Running: @router is not paused.', attrs: { id: 'cost-running' } });
  const tops = topTools(snapshot);
  const topList = el('ol', { class: 'top-tools', attrs: { 'aria-label': 'Tools by tokens this hour' } });
  for (const t of tops) topList.append(el('li', { attrs: { 'data-key': `top-${t.name}` } }, el('div', { class: 'tool-head' }, el('code', { text: t.name }), el('span', { class: 'score', text: t.text })), bar(t.fraction, `${t.name} ${t.text}`), t.parts ? el('div', { class: 'muted', text: t.parts }) : undefined));
  return section(
    'cost',
    'Cost window',
    paused,
    controls,
    el('p', { text: summary.totalText, attrs: { id: 'cost-total' } }),
    bar(summary.capFraction, `cap used ${(summary.capFraction * 100).toFixed(0)}%`, { className: 'cap-bar' }),
    el('p', { text: rate.text, attrs: { id: 'cost-rate' } }),
    el('p', { class: 'muted', text: rate.ruleText }),
    costGraphic(chart, snapshot, summary.totalText),
    costLegend(chart),
    el('h3', { text: 'Tools by tokens this hour' }),
    tops.length ? topList : el('p', { class: 'muted', text: 'No tool has used tokens this hour.' }),
  );
}

function costGraphic(chart: CostChartView, snapshot: CostSnapshot, totalText: string): SVGSVGElement {
  const { width, height } = chart;
  const graphic = svg('svg', { viewBox: `0 0 ${width} ${height}`, class: 'chart', role: 'img', 'aria-label': `Tokens per minute over the last hour. ${totalText}`, preserveAspectRatio: 'none', 'data-key': 'cost-chart' });
  graphic.append(svg('rect', { x: chart.shortWindowX, y: 0, width: Math.max(0, width - chart.shortWindowX), height, class: 'short-window' }, svg('title', {}, `last ${snapshot.limits.shortWindowMinutes} minutes (the spike rule's short window)`)));
  for (const b of chart.bars) {
    if (b.promptHeight + b.completionHeight <= 0) continue;
    graphic.append(
      svg('g', {}, svg('title', {}, b.label), svg('rect', { x: b.x, y: b.promptY, width: b.width, height: b.promptHeight, class: 'prompt' }), svg('rect', { x: b.x, y: b.completionY, width: b.width, height: b.completionHeight, class: 'completion' })),
    );
  }
  if (chart.cumulativePoints) graphic.append(svg('polyline', { points: chart.cumulativePoints, class: 'cumulative' }, svg('title', {}, 'running total this hour (right scale)')));
  for (const [line, cls] of [
    [chart.capLine, 'cap'],
    [chart.spikeLine, 'spike'],
    [chart.baseline, 'baseline'],
  ] as const) {
    if (line) graphic.append(svg('line', { x1: 0, x2: width, y1: line.y, y2: line.y, class: `line ${cls}`, 'data-key': `line-${cls}` }, svg('title', {}, line.label)));
  }
  return graphic;
}

function costLegend(chart: CostChartView): HTMLElement {
  return el(
    'ul',
    { class: 'legend' },
    el('li', {}, el('span', { class: 'swatch prompt' }), 'prompt'),
    el('li', {}, el('span', { class: 'swatch completion' }), 'completion'),
    el('li', {}, el('span', { class: 'swatch cumulative' }), 'hour total'),
    chart.capLine ? el('li', { attrs: { 'data-key': 'legend-cap' } }, el('span', { class: 'swatch cap' }), chart.capLine.label) : undefined,
    chart.spikeLine ? el('li', { attrs: { 'data-key': 'legend-spike' } }, el('span', { class: 'swatch spike' }), chart.spikeLine.label) : undefined,
    chart.baseline ? el('li', { attrs: { 'data-key': 'legend-baseline' } }, el('span', { class: 'swatch baseline' }), chart.baseline.label) : undefined,
  );
}

export function renderWarnings(turns: readonly TurnView[], loops: readonly LoopTurnHistory[]): HTMLElement {
  const rows = warningRows(turns, loops);
  if (rows.length === 0) return section('warnings', 'Loop and guard warnings', el('p', { class: 'muted', text: 'No guard has fired.' }));
  const table = el('table', { class: 'warnings', attrs: { 'aria-label': 'Loop and guard warnings' } });
  table.append(el('thead', {}, el('tr', {}, ...['Turn', 'Tool', 'Arguments', 'Rule', 'What the model was told'].map((h) => el('th', { text: h, attrs: { scope: 'col' } })))));
  const body = el('tbody');
  for (const r of rows) {
    body.append(el('tr', { class: `warning-row ${r.kind}` }, el('td', { text: String(r.turn) }), el('td', {}, r.tool ? el('code', { text: r.tool }) : undefined), el('td', {}, r.arguments ? el('code', { text: r.arguments }) : undefined), el('td', { text: r.rule }), el('td', { class: 'told', text: r.told })));
  }
  table.append(body);
  return section('warnings', 'Loop and guard warnings', table);
}

export function renderServers(view: ServersView): HTMLElement {
  const rows = serverRows(view);
  const list = el('ul', { class: 'servers' });
  for (const s of rows) {
    const item = el(
      'li',
      { class: 'server-row', attrs: { 'data-key': `server-${s.name}` } },
      el('div', { class: 'tool-head' }, el('strong', { text: s.name }), el('span', { class: `chip state ${s.tone}`, text: s.state }), el('span', { class: 'muted', text: s.detail }), button('Log', 'showServerLog', { label: `Log of ${s.name}`, data: { server: s.name } })),
      s.reason ? el('div', { class: 'warning', text: s.reason }) : undefined,
    );
    if (s.flags.length) {
      // Flag reasons quote the server's own text: always set as text, never as markup.
      const tools = new Set(s.flags.map((f) => f.tool)).size;
      const flags = el('ul', { class: 'flags', attrs: { 'aria-label': `Possible tool poisoning in ${s.name}` } });
      for (const f of s.flags) flags.append(el('li', { class: f.severity === 'high' ? 'bad' : 'warning' }, el('code', { text: f.tool }), el('span', { text: ` ${f.text}` })));
      item.append(el('div', { class: 'warning', text: `⚠ ${tools} tool${tools === 1 ? '' : 's'} flagged as possibly poisoned` }), flags);
    }
    if (s.tools.length) {
      const t = el('table', { class: 'tool-stats', attrs: { 'aria-label': `Calls to the tools of ${s.name}` } });
      t.append(el('tr', {}, ...['Tool', 'Calls', 'Latency', 'Size'].map((h) => el('th', { text: h, attrs: { scope: 'col' } }))));
      for (const r of s.tools) t.append(el('tr', { attrs: { 'data-key': `stats-${r.name}` } }, el('td', {}, el('code', { text: r.name })), el('td', { text: r.errors ? `${r.calls} (${r.errors} failed)` : String(r.calls) }), el('td', { text: r.latency }), el('td', { text: r.size })));
      item.append(t);
    }
    list.append(item);
  }
  return section('servers', 'Servers', rows.length ? list : el('p', { class: 'muted', text: 'No servers are configured.' }));
}
