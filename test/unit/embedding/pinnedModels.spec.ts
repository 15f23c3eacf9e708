import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { OnnxEmbedder } from '../../../src/core/embedding/onnxEmbedder';
import { downloadPinnedModel, findPinnedModel, isPinnedModelInstalled, PINNED_MODELS, pinnedModelBytes, pinnedRouterConfig, type PinnedModel } from '../../../src/core/embedding/pinnedModels';
import { startLocalServer, type LocalServer } from './localHttpServer';
import { buildTinyBertOnnx, handCls, tinyTables, tinyTokenizerConfig, tinyTokenizerJson, tokenId } from './tinyBertFolder';

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

describe('pinned models', () => {
  describe('the list', () => {
    it('has well-formed entries: https URLs pinned to a commit, 64-hex sha256, positive sizes, a license', () => {
      assert.ok(PINNED_MODELS.length >= 2);
      assert.equal(new Set(PINNED_MODELS.map((m) => m.id)).size, PINNED_MODELS.length, 'ids are unique');
      for (const model of PINNED_MODELS) {
        assert.match(model.id, /^[A-Za-z0-9._-]+$/, 'the id is a safe folder name');
        assert.ok(model.label && model.goodAt, model.id);
        assert.match(model.license, /^[A-Za-z0-9.-]+$/, `${model.id}: an SPDX id`);
        assert.match(model.licenseUrl, /^https:\/\//);
        assert.ok(model.pooling === 'mean' || model.pooling === 'cls', model.id);
        assert.ok(Number.isInteger(model.dimension) && model.dimension > 0, model.id);
        assert.ok(Number.isInteger(model.maxLength) && model.maxLength > 2, model.id);
        const names = model.files.map((f) => f.name);
        assert.ok(names.includes('model.onnx') && names.includes('tokenizer.json'), `${model.id}: ${names.join(', ')}`);
        assert.equal(new Set(names).size, names.length, `${model.id}: no file twice`);
        for (const file of model.files) {
          const url = new URL(file.url);
          assert.equal(url.protocol, 'https:', file.url);
          assert.match(url.pathname, /\/resolve\/[0-9a-f]{40}\//, `${file.url} names a commit, not a branch`);
          assert.match(file.sha256, /^[0-9a-f]{64}$/, file.url);
          assert.ok(Number.isSafeInteger(file.bytes) && file.bytes > 0, file.url);
        }
        assert.equal(pinnedModelBytes(model), model.files.reduce((s, f) => s + f.bytes, 0));
        assert.equal(findPinnedModel(model.id), model);
      }
    });

    it('carries the pooling each model was trained with: mean for MiniLM, CLS for bge', () => {
      assert.equal(findPinnedModel('all-MiniLM-L6-v2-int8')?.pooling, 'mean');
      assert.equal(findPinnedModel('bge-small-en-v1.5-int8')?.pooling, 'cls');
      assert.equal(findPinnedModel('all-MiniLM-L6-v2-int8')?.license, 'Apache-2.0');
      assert.equal(findPinnedModel('bge-small-en-v1.5-int8')?.license, 'MIT');
    });
  });

  describe('downloadPinnedModel', function () {
    this.timeout(20_000);
    let root: string;
    let server: LocalServer;
    const tables = tinyTables(3);
    const files = new Map<string, Buffer>([
      ['onnx/model_quantized.onnx', Buffer.from(buildTinyBertOnnx({ tables }))],
      ['tokenizer.json', Buffer.from(JSON.stringify(tinyTokenizerJson()))],
      ['tokenizer_config.json', Buffer.from(JSON.stringify(tinyTokenizerConfig()))],
    ]);
    let tiny: PinnedModel;

    before(async () => {
      root = await mkdtemp(path.join(os.tmpdir(), 'pinned-model-'));
      server = await startLocalServer((req, res) => {
        const body = files.get(req.path.replace(/^\/repo\/resolve\/[0-9a-f]+\//, ''));
        if (!body) {
          res.writeHead(404).end();
          return;
        }
        res.writeHead(200, { 'content-length': String(body.length) }).end(body);
      });
      const at = (repoPath: string): string => `${server.base}/repo/resolve/${'0'.repeat(40)}/${repoPath}`;
      const pin = (name: string, repoPath: string): PinnedModel['files'][number] => ({ name, url: at(repoPath), sha256: sha256(files.get(repoPath)!), bytes: files.get(repoPath)!.length });
      // Shaped like a real entry: the int8 graph from onnx/ saved as model.onnx, CLS pooling as for bge.
      tiny = {
        id: 'tiny-bert-test',
        label: 'tiny BERT (test)',
        source: 'local test server',
        dimension: 8,
        pooling: 'cls',
        maxLength: 16,
        license: 'MIT',
        licenseUrl: 'https://example.invalid/license',
        goodAt: 'tests',
        files: [pin('model.onnx', 'onnx/model_quantized.onnx'), pin('tokenizer.json', 'tokenizer.json'), pin('tokenizer_config.json', 'tokenizer_config.json')],
      };
    });

    after(async () => {
      await server.close();
      await rm(root, { recursive: true, force: true });
    });

    it('installs a folder that loads with the entry\'s pooling and token limit, and embeds', async () => {
      const dest = path.join(root, 'models', tiny.id);
      assert.equal(await isPinnedModelInstalled(tiny, dest), false);
      await downloadPinnedModel(tiny, { dest });
      assert.deepEqual(JSON.parse(await readFile(path.join(dest, 'tool_router_model.json'), 'utf8')), pinnedRouterConfig(tiny));
      assert.equal(await isPinnedModelInstalled(tiny, dest), true);

      const embedder = await OnnxEmbedder.load(dest);
      assert.equal(embedder.pooling, 'cls');
      assert.equal(embedder.maxLength, 16);
      const [v] = await embedder.embed(['read file']);
      const expected = handCls([tokenId('[CLS]'), tokenId('read'), tokenId('file'), tokenId('[SEP]')], tables);
      for (let d = 0; d < expected.length; d++) assert.ok(Math.abs(v![d]! - expected[d]!) < 1e-5, `dimension ${d}`);
      await embedder.dispose();
    });

    it('does not count a folder as installed when a file is short or the pins changed', async () => {
      const dest = path.join(root, 'models', 'changed');
      await downloadPinnedModel(tiny, { dest });
      const repinned: PinnedModel = { ...tiny, files: tiny.files.map((f) => (f.name === 'tokenizer.json' ? { ...f, sha256: 'b'.repeat(64) } : f)) };
      assert.equal(await isPinnedModelInstalled(repinned, dest), false, 're-pinned');
      await writeFile(path.join(dest, 'tokenizer_config.json'), '{}');
      assert.equal(await isPinnedModelInstalled(tiny, dest), false, 'a file of the wrong size');
    });
  });
});
