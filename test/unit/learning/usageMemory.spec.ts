import assert from 'node:assert/strict';
import { l2Normalize } from '../../../src/core/embedding/embedder';
import { DEFAULT_MIN_TEXT_SIMILARITY, DEFAULT_USAGE_HALF_LIFE_MS, neededTools, termOverlap, UsageMemory, type UsageMemoryOptions } from '../../../src/core/learning/usageMemory';
import { lexicalTerms } from '../../../src/core/selection/lexicalTerms';

const DAY = 24 * 60 * 60 * 1000;
const START = Date.UTC(2025, 0, 1);

/** A memory on a clock the test moves by hand. */
function memoryAt(options: UsageMemoryOptions = {}): { memory: UsageMemory; clock: { now: number } } {
  const clock = { now: START };
  return { memory: new UsageMemory({ clock: () => clock.now, ...options }), clock };
}

const unit = (...values: number[]): Float32Array => l2Normalize(Float32Array.from(values));

describe('use memory', () => {
  it('records a turn with its offered, called and missed tools, once each and in time order', () => {
    const { memory, clock } = memoryAt();
    memory.record({ prompt: '  open an issue for the login bug ', offered: ['gh_create_issue', 'gh_list'], called: ['gh_create_issue', 'gh_create_issue'], misses: ['gh_add_label'] });
    clock.now += 1000;
    memory.record({ prompt: 'older one', called: ['x'], at: START - DAY });
    const [first, second] = memory.records();
    assert.equal(first!.prompt, 'older one');
    assert.deepEqual(second, { at: START, prompt: 'open an issue for the login bug', offered: ['gh_create_issue', 'gh_list'], called: ['gh_create_issue'], misses: ['gh_add_label'] });
    assert.deepEqual(neededTools(second!), ['gh_create_issue', 'gh_add_label']);
  });

  it('raises the tools a similar past prompt needed, and nothing for a dissimilar prompt', () => {
    const { memory } = memoryAt();
    memory.record({ prompt: 'open an issue for the login bug in the tracker', called: ['gh_create_issue'] });
    memory.record({ prompt: 'list the files in the docs folder', called: ['fs_list_directory'] });
    const similar = memory.hintsFor('open an issue for the signup bug in the tracker', undefined);
    assert.ok((similar.get('gh_create_issue') ?? 0) > 0.3, `hint ${similar.get('gh_create_issue')}`);
    assert.equal(similar.has('fs_list_directory'), false);
    assert.equal(memory.hintsFor('what is the weather in Lisbon tomorrow', undefined).size, 0);
  });

  it('gives a repeated prompt the full hint', () => {
    const { memory } = memoryAt();
    memory.record({ prompt: 'deploy the staging build', called: ['ci_deploy'] });
    assert.equal(memory.hintsFor('deploy the staging build', undefined).get('ci_deploy'), 1);
  });

  it('compares prompt vectors by cosine when they come from the same model', () => {
    const { memory } = memoryAt({ modelId: 'model-a' });
    // Word overlap alone would not match these two prompts; their vectors do.
    memory.record({ prompt: 'ship it to production', vector: unit(1, 0.1, 0), called: ['ci_deploy'] });
    const hints = memory.hintsFor('release the new version', unit(1, 0.12, 0));
    assert.ok((hints.get('ci_deploy') ?? 0) > 0.9);
    assert.equal(memory.hintsFor('release the new version', unit(0, 0, 1)).size, 0, 'orthogonal vectors are not similar');
  });

  it('ignores vectors of another model and falls back to word overlap', () => {
    const { memory } = memoryAt({ modelId: 'model-b' });
    memory.record({ prompt: 'ship it to production', vector: unit(1, 0, 0), modelId: 'model-a', called: ['ci_deploy'] });
    memory.record({ prompt: 'open an issue for the login bug', vector: unit(0, 1, 0), modelId: 'model-a', called: ['gh_create_issue'] });
    // Same vector as the first record, but another model: not compared.
    assert.equal(memory.hintsFor('release the new version', unit(1, 0, 0)).size, 0);
    // Word overlap still finds the second.
    assert.ok((memory.hintsFor('open an issue for the signup bug', unit(1, 0, 0)).get('gh_create_issue') ?? 0) > 0);
  });

  it('reuses the vector hintsFor saw for the same prompt when recording', () => {
    const { memory } = memoryAt({ modelId: 'model-a' });
    const v = unit(0.3, 0.4, 0.5);
    memory.hintsFor('summarise this week', v);
    const stored = memory.record({ prompt: 'summarise this week', called: ['notes_search'] });
    assert.equal(stored!.vector, v);
    assert.equal(stored!.modelId, 'model-a');
  });

  it('counts misses like calls', () => {
    const { memory } = memoryAt();
    memory.record({ prompt: 'export the sales report as pdf', offered: ['docs_read'], called: ['docs_read'], misses: ['pdf_render'] });
    const hints = memory.hintsFor('export the sales report as pdf', undefined);
    assert.equal(hints.get('pdf_render'), 1);
    assert.equal(hints.get('docs_read'), 1);
  });

  it('decays: the hint halves after one half-life', () => {
    const { memory, clock } = memoryAt();
    memory.record({ prompt: 'deploy the staging build', called: ['ci_deploy'] });
    const fresh = memory.hintsFor('deploy the staging build', undefined).get('ci_deploy')!;
    clock.now += DEFAULT_USAGE_HALF_LIFE_MS;
    const later = memory.hintsFor('deploy the staging build', undefined).get('ci_deploy')!;
    assert.ok(Math.abs(later - fresh / 2) < 1e-9, `${fresh} → ${later}`);
    clock.now += 9 * DEFAULT_USAGE_HALF_LIFE_MS;
    assert.ok(memory.hintsFor('deploy the staging build', undefined).get('ci_deploy')! < 0.001);
  });

  it('keeps a tool’s best evidence, and only the nearest neighbours', () => {
    const { memory, clock } = memoryAt({ neighbours: 1 });
    memory.record({ prompt: 'deploy the staging build', called: ['ci_deploy', 'ci_old_tool'] });
    clock.now += DEFAULT_USAGE_HALF_LIFE_MS;
    memory.record({ prompt: 'deploy the staging build', called: ['ci_deploy'] });
    const hints = memory.hintsFor('deploy the staging build', undefined);
    assert.equal(hints.get('ci_deploy'), 1, 'the newer record is the best evidence');
    assert.equal(hints.has('ci_old_tool'), false, 'only one neighbour counts');
  });

  it('clears everything', () => {
    let changes = 0;
    const memory = new UsageMemory({ onChange: () => changes++ });
    memory.record({ prompt: 'deploy the staging build', called: ['ci_deploy'] });
    memory.clear();
    assert.equal(memory.size, 0);
    assert.equal(memory.hintsFor('deploy the staging build', undefined).size, 0);
    assert.equal(changes, 2);
  });

  it('when off, records nothing and hints nothing', () => {
    const memory = new UsageMemory({ enabled: false });
    assert.equal(memory.record({ prompt: 'deploy the staging build', called: ['ci_deploy'] }), undefined);
    assert.equal(memory.size, 0);
    // A fixed clock: with the real one, a millisecond passing on a busy machine would decay the hint below 1.
    const on = memoryAt().memory;
    on.record({ prompt: 'deploy the staging build', called: ['ci_deploy'] });
    on.enabled = false;
    assert.equal(on.hintsFor('deploy the staging build', undefined).size, 0);
    assert.equal(on.record({ prompt: 'another', called: ['x'] }), undefined);
    on.enabled = true;
    assert.equal(on.hintsFor('deploy the staging build', undefined).get('ci_deploy'), 1);
  });

  it('holds at most its capacity, oldest out', () => {
    const { memory, clock } = memoryAt({ capacity: 3 });
    for (let i = 0; i < 5; i++) {
      memory.record({ prompt: `prompt ${i}`, called: [`tool_${i}`] });
      clock.now += 1000;
    }
    assert.deepEqual(
      memory.records().map((r) => r.prompt),
      ['prompt 2', 'prompt 3', 'prompt 4'],
    );
    memory.replace([...memory.records(), { at: START - DAY, prompt: 'ancient', offered: [], called: ['t'], misses: [] }]);
    assert.equal(memory.size, 3);
    assert.ok(!memory.records().some((r) => r.prompt === 'ancient'));
  });

  it('merges records of one turn id (an agent’s calls after one search)', () => {
    const { memory, clock } = memoryAt();
    memory.record({ prompt: 'find a tool to send mail', called: ['mail_send'], misses: ['mail_send'], source: 'agent', turnId: 'search-1' });
    clock.now += 5000;
    memory.record({ prompt: 'find a tool to send mail', called: ['mail_attach'], misses: ['mail_attach'], source: 'agent', turnId: 'search-1' });
    assert.equal(memory.size, 1);
    assert.deepEqual(memory.records()[0], { at: START, prompt: 'find a tool to send mail', offered: [], called: ['mail_send', 'mail_attach'], misses: ['mail_send', 'mail_attach'], source: 'agent' });
  });

  it('ignores records that needed no tool, and empty prompts', () => {
    const { memory } = memoryAt();
    memory.record({ prompt: 'hello there', offered: ['a'] });
    assert.equal(memory.record({ prompt: '   ', called: ['a'] }), undefined);
    assert.equal(memory.size, 1);
    assert.equal(memory.hintsFor('hello there', undefined).size, 0);
  });

  it('word overlap is the cosine of the prompts’ term sets', () => {
    const a = new Set(lexicalTerms('open an issue for the login bug'));
    const b = new Set(lexicalTerms('opening issues about a login crash'));
    assert.equal(termOverlap(a, a), 1);
    assert.equal(termOverlap(a, new Set()), 0);
    // {open, issu, login, bug} · {open, issu, login, crash} = 3 / 4
    assert.equal(termOverlap(a, b), 0.75);
    assert.ok(termOverlap(a, b) >= DEFAULT_MIN_TEXT_SIMILARITY);
  });
});
