import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GENERAL_KINDS } from '../../../src/core/selection/generalNeeds';
import { needsPart, readNeedsPrompts } from '../../../scripts/data/needsPrompts';

function folderWith(lines: string[]): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'needs-prompts-'));
  fs.writeFileSync(path.join(dir, 'a.jsonl'), `${lines.join('\n')}\n`);
  return dir;
}

describe("the team's kind-only prompts (data/needs/written)", () => {
  const prompts = readNeedsPrompts();

  it('hold at least 800 prompts, with every kind needed and prompts that need none, in both parts', () => {
    assert.ok(prompts.length >= 800, `${prompts.length} prompts`);
    for (const kind of GENERAL_KINDS) {
      for (const part of ['train', 'dev'] as const) {
        const n = prompts.filter((p) => p.part === part && p.kinds.includes(kind)).length;
        assert.ok(n >= 10, `${kind} has ${n} ${part}-part prompts`);
      }
    }
    assert.ok(prompts.filter((p) => p.kinds.length === 0).length >= 100, 'prompts that need no general-purpose tool');
  });

  it('keep about a quarter for measuring, fixed by the text and not by the order', () => {
    const dev = prompts.filter((p) => p.part === 'dev').length / prompts.length;
    assert.ok(dev > 0.18 && dev < 0.32, `dev share ${dev}`);
    assert.equal(needsPart('What time is it in Tokyo?'), needsPart('  what time is it in tokyo?  '));
    const parts = new Set(Array.from({ length: 40 }, (_, i) => needsPart(`prompt number ${i}`)));
    assert.deepEqual([...parts].sort(), ['dev', 'train']);
  });

  it('refuse a bad line with the file, the line and what to write', () => {
    assert.throws(() => readNeedsPrompts(folderWith(['{"query": "a", "kinds": []}', 'not json'])), /a\.jsonl:2: not JSON/);
    assert.throws(() => readNeedsPrompts(folderWith(['{"query": "", "kinds": []}'])), /a\.jsonl:1: "query" must be a non-empty string/);
    assert.throws(() => readNeedsPrompts(folderWith(['{"query": "x"}'])), /"kinds" must be a list/);
    assert.throws(() => readNeedsPrompts(folderWith(['{"query": "x", "kinds": ["clock"]}'])), /unknown kind "clock"; use one of file_write/);
    assert.throws(() => readNeedsPrompts(folderWith(['{"query": "Same", "kinds": []}', '{"query": "same ", "kinds": []}'])), /a\.jsonl:2: the same prompt as .*a\.jsonl:1/);
  });
});
