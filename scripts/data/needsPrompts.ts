/**
 * The team's kind-only prompts (data/needs/written/*.jsonl): requests phrased as people write tasks, each
 * labelled only with the general-purpose kinds it needs (`{query, kinds}`), no tools. They teach the
 * unnamed-needs prompt model the requests the request set cannot hold: those that need only a
 * general-purpose tool ("what's 443 * 349", "what time is it in Tokyo"), which the train split has no
 * server for, and numeric or file-like requests that need none ("close ticket 4412", "save the draft in
 * gmail").
 *
 * Each prompt belongs to one part for good, by a hash of its text: a quarter is `dev`, to measure how well
 * the prompt model reads kinds (`npm run eval:needs`), and the rest is `train`. No other split of any data
 * set is involved: these prompts name no catalogue.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { GENERAL_KINDS, type GeneralKind } from '../../src/core/selection/generalNeeds';
import { isGeneralKind } from './generalKinds';

export const NEEDS_PROMPTS_DIR = path.resolve(__dirname, '..', '..', 'data', 'needs', 'written');

export type NeedsPart = 'train' | 'dev';

export interface NeedsPrompt {
  readonly query: string;
  readonly kinds: readonly GeneralKind[];
  readonly part: NeedsPart;
  /** `file:line`, for error messages and reports. */
  readonly where: string;
}

/**
 * One prompt in this many is kept for measuring. A quarter leaves about 250 prompts to measure on (30 or
 * more per kind) while most of the writing still teaches the model.
 */
const DEV_ONE_IN = 4;

/** The part a prompt belongs to: fixed by its text, so adding prompts never moves old ones between parts. */
export function needsPart(query: string): NeedsPart {
  const head = createHash('sha256').update(query.trim().toLowerCase()).digest().readUInt32BE(0);
  return head % DEV_ONE_IN === 0 ? 'dev' : 'train';
}

/**
 * Every prompt of data/needs/written (files by name, lines in order). A line that does not parse, lacks a
 * query, lists an unknown kind or repeats an earlier prompt is an error naming the file and line.
 */
export function readNeedsPrompts(dir = NEEDS_PROMPTS_DIR): NeedsPrompt[] {
  if (!fs.existsSync(dir)) return [];
  const out: NeedsPrompt[] = [];
  const seen = new Map<string, string>();
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl')).sort()) {
    fs.readFileSync(path.join(dir, file), 'utf8').split('\n').forEach((line, i) => {
      if (!line.trim()) return;
      const where = `data/needs/written/${file}:${i + 1}`;
      let row: { query?: unknown; kinds?: unknown };
      try {
        row = JSON.parse(line) as typeof row;
      } catch {
        throw new Error(`${where}: not JSON; write one {"query": "...", "kinds": [...]} a line.`);
      }
      if (typeof row.query !== 'string' || !row.query.trim()) throw new Error(`${where}: "query" must be a non-empty string.`);
      if (!Array.isArray(row.kinds)) throw new Error(`${where}: "kinds" must be a list (empty when the prompt needs no general-purpose tool).`);
      const bad = row.kinds.find((k) => typeof k !== 'string' || !isGeneralKind(k));
      if (bad !== undefined) throw new Error(`${where}: unknown kind ${JSON.stringify(bad)}; use one of ${GENERAL_KINDS.join(', ')}.`);
      const key = row.query.trim().toLowerCase();
      const earlier = seen.get(key);
      if (earlier) throw new Error(`${where}: the same prompt as ${earlier}; keep one.`);
      seen.set(key, where);
      out.push({ query: row.query, kinds: [...new Set(row.kinds as GeneralKind[])], part: needsPart(row.query), where });
    });
  }
  return out;
}
