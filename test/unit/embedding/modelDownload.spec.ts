import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { downloadModelFolder, type DownloadModelOptions } from '../../../src/core/embedding/modelDownload';
import { OnnxEmbedder } from '../../../src/core/embedding/onnxEmbedder';
import { closedPortBase, startLocalServer, type LocalServer } from './localHttpServer';
import { buildTinyBertOnnx, tinyTables, tinyTokenizerConfig, tinyTokenizerJson } from './tinyBertFolder';
import { rejectsWith } from './embeddingAssertions';

const FOLDER_PATH = '/models/tiny-bert/resolve/main/';

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}


interface ServedFile {
  readonly body: Buffer;
  /** Send without Content-Length (chunked), as a CDN may. */
  readonly chunked?: boolean;
  readonly status?: number;
  /** Send this many bytes, then stop answering (stall) or drop the connection (cut). */
  readonly stopAfter?: { readonly bytes: number; readonly then: 'stall' | 'cut' };
}

describe('downloadModelFolder', function () {
  this.timeout(20_000); // one test loads the downloaded model in onnxruntime; generous for a busy machine
  let root: string;
  let server: LocalServer | undefined;
  let files: Map<string, ServedFile>;
  let count = 0;
  let dest: string;
  const model = Buffer.from(buildTinyBertOnnx({ tables: tinyTables() }));
  const tokenizer = Buffer.from(JSON.stringify(tinyTokenizerJson()));
  const tokenizerConfig = Buffer.from(JSON.stringify(tinyTokenizerConfig()));
  const pooling = Buffer.from(JSON.stringify({ pooling_mode_cls_token: true }));

  async function serveFolder(): Promise<string> {
    server = await startLocalServer((req, res) => {
      const name = req.path.startsWith(FOLDER_PATH) ? decodeURIComponent(req.path.slice(FOLDER_PATH.length)) : '';
      const file = files.get(name);
      if (!file) {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('Entry not found');
        return;
      }
      if (file.status && file.status !== 200) {
        res.writeHead(file.status, 'Internal Server Error');
        res.end('oops');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/octet-stream', ...(file.chunked ? {} : { 'content-length': String(file.body.length) }) });
      const sent = file.stopAfter ? file.body.subarray(0, file.stopAfter.bytes) : file.body;
      // Three writes: the client may see them as one chunk or several.
      const third = Math.ceil(sent.length / 3);
      for (let i = 0; i < sent.length; i += third) res.write(sent.subarray(i, i + third));
      if (!file.stopAfter) res.end();
      else if (file.stopAfter.then === 'cut') setTimeout(() => res.destroy(), 20);
    });
    return `${server.base}${FOLDER_PATH}`;
  }

  function download(options: Partial<DownloadModelOptions> & Pick<DownloadModelOptions, 'url'>): Promise<Record<string, string>> {
    return downloadModelFolder({ dest, ...options });
  }

  before(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'model-download-'));
  });

  beforeEach(() => {
    files = new Map<string, ServedFile>([
      ['model.onnx', { body: model }],
      ['tokenizer.json', { body: tokenizer, chunked: true }],
      ['tokenizer_config.json', { body: tokenizerConfig }],
      ['1_Pooling/config.json', { body: pooling }],
    ]);
    dest = path.join(root, `case-${++count}`, 'models', 'tiny-bert');
  });

  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  async function parentEntries(): Promise<string[]> {
    return readdir(path.dirname(dest)).catch(() => []);
  }

  it('downloads the folder into dest, returns the hashes, and the result loads and embeds', async () => {
    const url = await serveFolder();
    const hashes = await download({ url });
    assert.deepEqual(hashes, {
      'model.onnx': sha256(model),
      'tokenizer.json': sha256(tokenizer),
      'tokenizer_config.json': sha256(tokenizerConfig),
      '1_Pooling/config.json': sha256(pooling),
    });
    assert.deepEqual(await readFile(path.join(dest, 'model.onnx')), model);
    assert.deepEqual(await readFile(path.join(dest, 'tokenizer.json')), tokenizer);
    assert.deepEqual(await readFile(path.join(dest, '1_Pooling', 'config.json')), pooling);
    assert.deepEqual((await readdir(dest)).sort(), ['1_Pooling', 'model.onnx', 'tokenizer.json', 'tokenizer_config.json']);
    assert.deepEqual(await parentEntries(), ['tiny-bert'], 'no staging folder left');
    const requested = server!.requests.map((r) => r.path.slice(FOLDER_PATH.length));
    assert.deepEqual(requested, ['model.onnx', 'tokenizer.json', 'tokenizer_config.json', 'tool_router_model.json', '1_Pooling/config.json', 'config.json']);

    const embedder = await OnnxEmbedder.load(dest);
    assert.equal(embedder.pooling, 'cls', 'the downloaded pooling config is used');
    const [v] = await embedder.embed(['read file']);
    assert.equal(v!.length, 8);
    await embedder.dispose();
  });

  it('adds the trailing slash to a folder URL', async () => {
    const url = await serveFolder();
    await download({ url: url.slice(0, -1) });
    assert.deepEqual(await readFile(path.join(dest, 'model.onnx')), model);
  });

  it('reports progress from Content-Length, and without a total when the server sends none', async () => {
    const url = await serveFolder();
    const events: Array<[number, number | undefined, string]> = [];
    await download({ url, onProgress: (done, total, file) => events.push([done, total, file]) });
    const modelEvents = events.filter(([, , file]) => file === 'model.onnx');
    assert.ok(modelEvents.length >= 2, `only ${modelEvents.length} progress events`);
    assert.deepEqual(modelEvents[0], [0, model.length, 'model.onnx']);
    assert.deepEqual(modelEvents.at(-1), [model.length, model.length, 'model.onnx']);
    for (let i = 1; i < modelEvents.length; i++) assert.ok(modelEvents[i]![0] >= modelEvents[i - 1]![0], 'progress never goes back');
    const tokenizerEvents = events.filter(([, , file]) => file === 'tokenizer.json');
    assert.ok(tokenizerEvents.every(([, total]) => total === undefined), 'chunked: total unknown');
    assert.equal(tokenizerEvents.at(-1)![0], tokenizer.length);
  });

  it('accepts matching expected hashes (any case)', async () => {
    const url = await serveFolder();
    const hashes = await download({ url, expectedSha256: { 'model.onnx': sha256(model).toUpperCase(), 'tokenizer.json': sha256(tokenizer) } });
    assert.equal(hashes['model.onnx'], sha256(model));
  });

  it('refuses a file whose sha256 differs, naming both hashes, and installs nothing', async () => {
    const url = await serveFolder();
    const wrong = 'a'.repeat(64);
    await rejectsWith(download({ url, expectedSha256: { 'tokenizer.json': wrong } }), 'MODEL_INVALID',
      /tokenizer\.json/, new RegExp(`sha256 ${sha256(tokenizer)}`), new RegExp(`but ${wrong} was expected`), /Nothing was installed/);
    assert.deepEqual(await parentEntries(), [], 'neither dest nor the staging folder exists');
  });

  it('keeps an existing model folder when the new download fails', async () => {
    await mkdir(dest, { recursive: true });
    await writeFile(path.join(dest, 'model.onnx'), 'the old model');
    const url = await serveFolder();
    await rejectsWith(download({ url, expectedSha256: { 'model.onnx': 'b'.repeat(64) } }), 'MODEL_INVALID');
    assert.equal(await readFile(path.join(dest, 'model.onnx'), 'utf8'), 'the old model');
    assert.deepEqual(await parentEntries(), ['tiny-bert']);
  });

  it('replaces an existing model folder as a whole on success', async () => {
    await mkdir(dest, { recursive: true });
    await writeFile(path.join(dest, 'model.onnx'), 'the old model');
    await writeFile(path.join(dest, 'vocab.txt'), 'a file the new folder does not have');
    const url = await serveFolder();
    await download({ url });
    assert.deepEqual(await readFile(path.join(dest, 'model.onnx')), model);
    assert.deepEqual((await readdir(dest)).sort(), ['1_Pooling', 'model.onnx', 'tokenizer.json', 'tokenizer_config.json']);
    assert.deepEqual(await parentEntries(), ['tiny-bert'], 'the previous folder was removed');
  });

  it('fails clearly when a required file is missing (404)', async () => {
    files.delete('tokenizer.json');
    const url = await serveFolder();
    await rejectsWith(download({ url }), 'MODEL_INVALID', /has no tokenizer\.json \(HTTP 404\)/, /model\.onnx and tokenizer\.json/, /resolve\/main/);
    assert.deepEqual(await parentEntries(), []);
  });

  it('treats an optional file as required when its hash is expected', async () => {
    const url = await serveFolder();
    await rejectsWith(download({ url, expectedSha256: { 'config.json': 'c'.repeat(64) } }), 'MODEL_INVALID', /has no config\.json \(HTTP 404\)/);
  });

  it('reports other HTTP errors with their status', async () => {
    files.set('model.onnx', { body: model, status: 500 });
    const url = await serveFolder();
    await rejectsWith(download({ url }), 'ENDPOINT_UNAVAILABLE', /Downloading model\.onnx from http:\/\/127\.0\.0\.1:\d+\/models\/tiny-bert\/resolve\/main\/ failed: HTTP 500/);
    assert.deepEqual(await parentEntries(), []);
  });

  it('reports a server that cannot be reached', async () => {
    const base = await closedPortBase();
    await rejectsWith(download({ url: `${base}/m/` }), 'ENDPOINT_UNAVAILABLE', /Could not download model\.onnx/, /ECONNREFUSED/, /Check the URL/);
    assert.deepEqual(await parentEntries(), []);
  });

  it('reports a download cut short', async () => {
    files.set('model.onnx', { body: model, stopAfter: { bytes: 100, then: 'cut' } });
    const url = await serveFolder();
    await rejectsWith(download({ url }), 'ENDPOINT_UNAVAILABLE', /model\.onnx/, /broke off|ended after/);
    assert.deepEqual(await parentEntries(), []);
  });

  it('gives up on a stalled download', async () => {
    files.set('model.onnx', { body: model, stopAfter: { bytes: 100, then: 'stall' } });
    const url = await serveFolder();
    await rejectsWith(download({ url, stallTimeoutMs: 150 }), 'TIMEOUT', /model\.onnx/, /stalled/);
    assert.deepEqual(await parentEntries(), []);
  });

  it('stops when cancelled, leaving nothing behind', async () => {
    files.set('model.onnx', { body: model, stopAfter: { bytes: 100, then: 'stall' } });
    const url = await serveFolder();
    const controller = new AbortController();
    const pending = download({ url, signal: controller.signal, onProgress: (done) => done > 0 && controller.abort() });
    await rejectsWith(pending, 'CANCELLED', /nothing was installed/);
    assert.deepEqual(await parentEntries(), []);
  });

  it('refuses malformed expected hashes and file names it does not download', async () => {
    await assert.rejects(download({ url: 'http://127.0.0.1:1/m/', expectedSha256: { 'model.onnx': 'xyz' } }), /must be 64 hex digits/);
    await assert.rejects(download({ url: 'http://127.0.0.1:1/m/', expectedSha256: { 'vocab.txt': 'a'.repeat(64) } }), /"vocab\.txt", which is not a model folder file/);
    await assert.rejects(download({ url: 'ftp://example.com/m/' }), /not an http\(s\) URL/);
  });
});
