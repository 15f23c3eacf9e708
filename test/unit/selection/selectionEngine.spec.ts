/**
 * The selection engine with the real bundled model (onnxruntime-node): what the extension relies on to
 * make its first selection quickly, a disk cache written on request (so the next start embeds nothing)
 * and a warm-up that is safe to start whatever the embedder.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { cacheFileName } from '../../../src/core/embedding/embeddingCache';
import { createSelectionEngine, TOOL_READINGS_FILE } from '../../../src/core/selection/selectionEngine';
import type { SelectableTool } from '../../../src/core/selection/selectionTypes';
import { loadInProcess } from '../../../src/core/embedding/onnxEmbedder';
import type { LocalModelLoader } from '../../../src/core/embedding/embedder';

const ROOT = path.resolve(__dirname, '../../..');
const TOOLS: SelectableTool[] = [
  { name: 'weather_forecast', server: 'weather', description: 'Get the weather forecast for a city' },
  { name: 'mail_send', server: 'mail', description: 'Send an email message' },
  { name: 'files_read', server: 'files', description: 'Read a file from disk' },
];

describe('selection engine: start-up', function () {
  this.timeout(30_000);
  let folder: string;
  beforeEach(async () => {
    folder = await mkdtemp(path.join(os.tmpdir(), 'engine-cache-'));
  });
  afterEach(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  it('writes the embedded tools to the disk cache on flush, before its own quiet moment', async () => {
    const engine = await createSelectionEngine({ loadModel: loadInProcess, embeddings: { provider: 'local', model: 'default' }, root: ROOT, cacheFolder: folder });
    try {
      engine.selector.setCatalogue(TOOLS);
      await engine.index!.whenReady();
      assert.deepEqual(await readdir(folder).catch(() => []), [], 'nothing written yet');
      await engine.flush();
      assert.deepEqual((await readdir(folder)).sort(), [cacheFileName(engine.index!.modelId), TOOL_READINGS_FILE].sort());
    } finally {
      await engine.dispose();
    }
  });

  it('reads no tool again at the next start with the same tools, and reads a changed one', async () => {
    const first = await createSelectionEngine({ loadModel: loadInProcess, embeddings: { provider: 'local', model: 'default' }, root: ROOT, cacheFolder: folder });
    first.selector.setCatalogue(TOOLS);
    const before = await first.selector.select({ prompt: 'what is the weather in Oslo' });
    await first.dispose();
    const saved = JSON.parse(await readFile(path.join(folder, TOOL_READINGS_FILE), 'utf8')) as { readings: Record<string, unknown> };
    assert.equal(Object.keys(saved.readings).length, TOOLS.length);

    const logs: string[] = [];
    const second = await createSelectionEngine({ loadModel: loadInProcess, embeddings: { provider: 'local', model: 'default' }, root: ROOT, cacheFolder: folder, log: (m) => logs.push(m) });
    try {
      second.selector.setCatalogue(TOOLS.map((t) => ({ ...t })));
      const after = await second.selector.select({ prompt: 'what is the weather in Oslo' });
      assert.deepEqual(after.tools.map((t) => [t.name, t.score]), before.tools.map((t) => [t.name, t.score]), 'the same selection from saved readings');
      assert.deepEqual(logs, []);
      // Nothing new was read, so nothing is written again.
      await rm(path.join(folder, TOOL_READINGS_FILE));
      await second.flush();
      assert.equal(await readFile(path.join(folder, TOOL_READINGS_FILE), 'utf8').catch(() => 'none'), 'none');
      second.selector.setCatalogue([...TOOLS, { name: 'notes_add', server: 'notes', description: 'Add a note' }]);
      await second.flush();
      const written = JSON.parse(await readFile(path.join(folder, TOOL_READINGS_FILE), 'utf8')) as { readings: Record<string, unknown> };
      assert.equal(Object.keys(written.readings).length, TOOLS.length + 1);
    } finally {
      await second.dispose();
    }
  });

  it('reads every tool again, and says why, when the saved readings are broken', async () => {
    await writeFile(path.join(folder, TOOL_READINGS_FILE), '{"version": 1, "needs"');
    const logs: string[] = [];
    const engine = await createSelectionEngine({ loadModel: loadInProcess, embeddings: { provider: 'local', model: 'default' }, root: ROOT, cacheFolder: folder, log: (m) => logs.push(m) });
    try {
      engine.selector.setCatalogue(TOOLS);
      const selection = await engine.selector.select({ prompt: 'what is the weather in Oslo' });
      assert.equal(selection.tools[0]?.name, 'weather_forecast');
      assert.equal(logs.length, 1);
      assert.match(logs[0]!, /tool-readings\.json were not used: .*They are written again/);
      await engine.flush();
      assert.equal(Object.keys((JSON.parse(await readFile(path.join(folder, TOOL_READINGS_FILE), 'utf8')) as { readings: object }).readings).length, TOOLS.length);
    } finally {
      await engine.dispose();
    }
  });

  it('starts loading the model at once, and builds the rest only once `after` settles', async () => {
    const asked: string[] = [];
    const loadModel: LocalModelLoader = (modelFolder) => {
      asked.push(modelFolder);
      return loadInProcess(modelFolder);
    };
    let release: () => void = () => undefined;
    const after = new Promise<void>((resolve) => (release = resolve));
    let built = false;
    const creating = createSelectionEngine({ loadModel, after, embeddings: { provider: 'local', model: 'default' }, root: ROOT }).then((engine) => {
      built = true;
      return engine;
    });
    assert.deepEqual(asked, [path.join(ROOT, 'media', 'model')], 'the model is asked for before `after` settles');
    // Long enough for the model to load here; the engine still waits for `after`.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    assert.equal(built, false);
    release();
    const engine = await creating;
    assert.ok(engine.index, 'an engine with the model');
    await engine.dispose();
  });

  it('warming up never rejects, even without a local model', async () => {
    const engine = await createSelectionEngine({ loadModel: loadInProcess, embeddings: { provider: 'none', model: 'default' }, root: ROOT });
    await engine.warmUp();
    await engine.dispose();
  });
});
