import { readAsText, type NearMiss, type Selection } from './selectionTypes';

/**
 * Selections as plain text for people: Explain Selection's document, and the lines the CLI's `select`
 * shares with it (the tools not sent). Pure, so what people read is tested under plain Node.
 */

/** A near miss's scores, those known and not already in its reason: `score 0.41, cosine 0.52, lexical 3.10`. */
export function nearMissScores(n: NearMiss): string {
  return [
    ...(n.why !== 'below-cutoff' ? [`score ${n.score.toFixed(2)}`] : []),
    ...(n.cosine !== undefined ? [`cosine ${n.cosine.toFixed(2)}`] : []),
    ...(n.lexical !== undefined ? [`lexical ${n.lexical.toFixed(2)}`] : []),
  ].join(', ');
}

/** One line per near miss, best first: `<prefix>name  (why) reason (scores)`. */
export function nearMissLines(selection: Pick<Selection, 'nearMisses'>, prefix: string): string[] {
  return selection.nearMisses.map((n) => {
    const scores = nearMissScores(n);
    return `${prefix}${n.name}  (${n.why}) ${n.reason}${scores ? ` (${scores})` : ''}`;
  });
}

/** Explain Selection's account: every tool sent, left out and not sent, with scores and reasons (the panel shows the same with bars). */
export function explainText(s: Selection): string {
  const lines = [
    `Prompt: ${s.prompt.replace(/\n/g, ' ')}`,
    `Method: ${s.method}${s.methodNote ? ` — ${s.methodNote}` : ''}`,
    ...(s.readAs?.length ? [`Spelling: ${readAsText(s)}`] : []),
    `${s.tools.length} tools sent, ~${s.tokens.selected} of ${s.tokens.catalogue} catalogue tokens; cutoff ${s.threshold}`,
    '',
  ];
  for (const t of s.tools) {
    const scores = [t.score !== undefined ? `score ${t.score.toFixed(2)}` : '', t.cosine !== undefined ? `cosine ${t.cosine.toFixed(2)}` : '', t.lexical !== undefined ? `lexical ${t.lexical.toFixed(2)}` : ''].filter(Boolean).join(', ');
    lines.push(`+ ${t.name}  [${t.stages.join(', ')}] ${scores}\n    ${t.reason}`);
  }
  if (s.dropped.length) lines.push('', 'Left out:');
  for (const d of s.dropped) lines.push(`- ${d.name}  (${d.by}) ${d.reason}`);
  if (s.nearMisses.length) lines.push('', `Not sent (the best ${s.nearMisses.length} ranked tools that were not sent):`, ...nearMissLines(s, '~ '));
  if (s.issues.length) lines.push('', '// Issues:', ...s.issues.map((i) => `! ${i}`));
  lines.push('', `// Timings (ms): ${Object.entries(s.timingsMs).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ')}`);
  return `${lines.join('\n')}\n`;
}
