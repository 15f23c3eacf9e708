import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { downloadModelFiles, partialFolderFor, type DownloadModelFilesOptions, type ModelFileSource } from '../../../src/core/embedding/modelDownload';
import { OnnxEmbedder } from '../../../src/core/embedding/onnxEmbedder';
import { startLocalServer, type LocalServer, type RecordedRequest } from './localHttpServer';
import { buildTinyBertOnnx, tinyTables, tinyTokenizerConfig, tinyTokenizerJson } from './tinyBertFolder';
import { rejectsWith } from './embeddingAssertions';

/**
 * downloadModelFiles against a real HTTP server on 127.0.0.1 that speaks byte ranges, serving a tiny
 * BERT-shaped model (a real ONNX graph and tokenizer) and, where a test asks, a corrupted copy of it.
 */

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

interface ServedFile {
  readonly body: Buffer;
  /** Answer every request with 200 and the whole body, as a server without range support does. */
  readonly ignoreRange?: boolean;
  /** On the first request for this file only: send this many bytes of the answer, then cut or stall. */
  readonly firstAnswer?: { readonly bytes: number; readonly then: 'cut' | 'stall' };
}

/** What the server did for one request. */
interface Served {
  readonly name: string;
  readonly range: string | undefined;
  readonly status: number;
  readonly bytesSent: number;
}

const FOLDER = '/m/';

describe('downloadModelFiles (pinned files, resumable)', function () {
  this.timeout(20_000); // loads the result in onnxruntime
  let root: string;
  let dest: string;
  let count = 0;
  let server: LocalServer | undefined;
  let served: Map<string, ServedFile>;
  let log: Served[];
  /** Files asked for at least once in this test (not cleared with the log between attempts). */
  let asked: Set<string>;
  const model = Buffer.from(buildTinyBertOnnx({ tables: tinyTables() }));
  const tokenizer = Buffer.from(JSON.stringify(tinyTokenizerJson()));
  const tokenizerConfig = Buffer.from(JSON.stringify(tinyTokenizerConfig()));
  /** The same size as the model, one byte changed: only the hash can tell. */
  const corrupted = Buffer.from(model);
  corrupted[Math.floor(corrupted.length / 2)] ^= 0xff;
  const cutAt = Math.floor(model.length * 0.4);

  function answer(req: RecordedRequest, res: http.ServerResponse): void {
    const name = req.path.startsWith(FOLDER) ? decodeURIComponent(req.path.slice(FOLDER.length)) : '';
    const file = served.get(name);
    const range = typeof req.headers.range === 'string' ? req.headers.range : undefined;
    const first = !asked.has(name);
    asked.add(name);
    if (!file) {
      log.push({ name, range, status: 404, bytesSent: 0 });
      res.writeHead(404).end('Entry not found');
      return;
    }
    const size = file.body.length;
    let status = 200;
    let start = 0;
    const match = range && !file.ignoreRange ? /^bytes=(\d+)-$/.exec(range) : null;
    if (match) {
      start = Number(match[1]);
      if (start >= size) {
        log.push({ name, range, status: 416, bytesSent: 0 });
        res.writeHead(416, { 'content-range': `bytes */${size}` }).end();
        return;
      }
      status = 206;
    }
    const slice = file.body.subarray(start);
    const headers: Record<string, string> = { 'content-type': 'application/octet-stream', 'content-length': String(slice.length), 'accept-ranges': 'bytes' };
    if (status === 206) headers['content-range'] = `bytes ${start}-${size - 1}/${size}`;
    res.writeHead(status, headers);
    const plan = first ? file.firstAnswer : undefined;
    const sent = plan ? slice.subarray(0, plan.bytes) : slice;
    log.push({ name, range, status, bytesSent: sent.length });
    // Cut only once the bytes are flushed, so the client holds exactly `plan.bytes` of them.
    res.write(sent, () => {
      if (plan?.then === 'cut') setTimeout(() => res.destroy(), 30);
    });
    if (!plan) res.end();
  }

  async function serve(): Promise<ModelFileSource[]> {
    server = await startLocalServer(answer);
    return pins(server.base);
  }

  /** The pins: the real model's size and hash, whatever the server sends. */
  function pins(base: string): ModelFileSource[] {
    return [
      { name: 'model.onnx', url: `${base}${FOLDER}model.onnx`, sha256: sha256(model), bytes: model.length },
      { name: 'tokenizer.json', url: `${base}${FOLDER}tokenizer.json`, sha256: sha256(tokenizer), bytes: tokenizer.length },
      { name: 'tokenizer_config.json', url: `${base}${FOLDER}tokenizer_config.json`, sha256: sha256(tokenizerConfig), bytes: tokenizerConfig.length },
    ];
  }

  function download(files: ModelFileSource[], options: Partial<DownloadModelFilesOptions> = {}): Promise<Record<string, string>> {
    return downloadModelFiles({ files, dest, extraFiles: { 'tool_router_model.json': JSON.stringify({ pooling: 'cls' }) }, ...options });
  }

  async function entries(): Promise<string[]> {
    return (await readdir(path.dirname(dest)).catch(() => [])).sort();
  }

  const size = (file: string): Promise<number> => stat(file).then((s) => s.size, () => -1);

  before(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'model-files-'));
  });

  beforeEach(() => {
    served = new Map([
      ['model.onnx', { body: model }],
      ['tokenizer.json', { body: tokenizer }],
      ['tokenizer_config.json', { body: tokenizerConfig }],
    ]);
    log = [];
    asked = new Set();
    dest = path.join(root, `case-${++count}`, 'models', 'tiny');
  });

  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('installs every file and the extra config, and the folder loads and embeds', async () => {
    const files = await serve();
    const events: Array<[number, number, string]> = [];
    const hashes = await download(files, { onProgress: (done, total, file) => events.push([done, total, file]) });
    assert.deepEqual(hashes, { 'model.onnx': sha256(model), 'tokenizer.json': sha256(tokenizer), 'tokenizer_config.json': sha256(tokenizerConfig) });
    assert.deepEqual((await readdir(dest)).sort(), ['model.onnx', 'tokenizer.json', 'tokenizer_config.json', 'tool_router_model.json']);
    assert.deepEqual(await readFile(path.join(dest, 'model.onnx')), model);
    assert.deepEqual(await entries(), ['tiny'], 'no partial folder and no lock left');
    assert.ok(log.every((s) => s.range === undefined && s.status === 200), 'a fresh download asks for whole files');
    assert.ok(server!.requests.every((r) => r.headers['accept-encoding'] === 'identity'), 'bytes are asked for unencoded, so offsets are the file\'s own');

    const total = model.length + tokenizer.length + tokenizerConfig.length;
    assert.ok(events.every(([, t]) => t === total), 'progress is over the total of all files');
    for (let i = 1; i < events.length; i++) assert.ok(events[i]![0] >= events[i - 1]![0], 'progress never goes back');
    assert.equal(events.at(-1)![0], total);

    const embedder = await OnnxEmbedder.load(dest);
    assert.equal(embedder.pooling, 'cls', 'the extra config is in the folder');
    const [v] = await embedder.embed(['read file']);
    assert.equal(v!.length, 8);
    await embedder.dispose();
  });

  it('resumes after the server cut the connection: Range on the next attempt, only the rest sent, right hash', async () => {
    served.set('model.onnx', { body: model, firstAnswer: { bytes: cutAt, then: 'cut' } });
    const files = await serve();
    await rejectsWith(download(files), 'ENDPOINT_UNAVAILABLE', /model\.onnx/, /broke off|ended after/, /continues/);
    assert.equal(await stat(dest).then(() => true, () => false), false, 'nothing installed');
    const partial = partialFolderFor(dest, files);
    assert.equal(await size(path.join(partial, 'model.onnx')), cutAt, 'the bytes received are kept');

    log = [];
    const events: number[] = [];
    await download(files, { onProgress: (done) => events.push(done) });
    assert.deepEqual(await readFile(path.join(dest, 'model.onnx')), model);
    const resumed = log.find((s) => s.name === 'model.onnx')!;
    assert.equal(resumed.range, `bytes=${cutAt}-`);
    assert.equal(resumed.status, 206);
    assert.equal(resumed.bytesSent, model.length - cutAt, 'only the rest was sent');
    assert.ok(events[0]! >= cutAt, `progress starts from the kept bytes (${events[0]})`);
    assert.deepEqual(await entries(), ['tiny'], 'the partial folder became the model folder');
  });

  it('starts the file over when the server ignores Range (200), and still gets it right', async () => {
    served.set('model.onnx', { body: model, ignoreRange: true, firstAnswer: { bytes: cutAt, then: 'cut' } });
    const files = await serve();
    await rejectsWith(download(files), 'ENDPOINT_UNAVAILABLE');
    log = [];
    await download(files);
    const second = log.find((s) => s.name === 'model.onnx')!;
    assert.equal(second.range, `bytes=${cutAt}-`, 'it asked to resume');
    assert.equal(second.status, 200);
    assert.equal(second.bytesSent, model.length);
    assert.deepEqual(await readFile(path.join(dest, 'model.onnx')), model, 'the kept bytes were replaced, not appended to');
  });

  it('starts the file over when the kept bytes cannot be continued (416)', async () => {
    const files = await serve();
    const partial = partialFolderFor(dest, files);
    await mkdir(partial, { recursive: true });
    // Bytes a server no longer has at that offset: it answers 416, so the whole file is fetched.
    served.set('tokenizer.json', { body: tokenizer.subarray(0, 10) });
    await writeFile(path.join(partial, 'tokenizer.json'), tokenizer.subarray(0, 20));
    await rejectsWith(download(files), 'ENDPOINT_UNAVAILABLE', /tokenizer\.json/, /ended after 10 of/);
    assert.deepEqual(log.filter((s) => s.name === 'tokenizer.json').map((s) => s.status), [416, 200]);
  });

  it('refuses a file whose sha256 differs: MODEL_INVALID naming file and both hashes, partial file deleted, nothing installed', async () => {
    served.set('model.onnx', { body: corrupted });
    const files = await serve();
    await rejectsWith(download(files), 'MODEL_INVALID', /model\.onnx/, new RegExp(`sha256 ${sha256(corrupted)}`), new RegExp(`but ${sha256(model)} was expected`), /nothing was installed/);
    assert.equal(await stat(dest).then(() => true, () => false), false, 'nothing installed');
    const partial = partialFolderFor(dest, files);
    assert.equal(await size(path.join(partial, 'model.onnx')), -1, 'the bad file is gone');
    assert.deepEqual(await entries(), [path.basename(partial)], 'no lock left behind');
  });

  it('refuses a file larger than its pin without writing past it', async () => {
    served.set('tokenizer.json', { body: Buffer.concat([tokenizer, Buffer.from('   ')]) });
    const files = await serve();
    await rejectsWith(download(files), 'MODEL_INVALID', /tokenizer\.json/, /larger than the pinned/);
    assert.equal(await size(path.join(partialFolderFor(dest, files), 'tokenizer.json')), -1);
  });

  it('stops when cancelled: CANCELLED, nothing installed, the bytes kept; the next attempt completes from there', async () => {
    served.set('model.onnx', { body: model, firstAnswer: { bytes: cutAt, then: 'stall' } });
    const files = await serve();
    const controller = new AbortController();
    const pending = download(files, { signal: controller.signal, onProgress: (done) => done >= cutAt && controller.abort() });
    await rejectsWith(pending, 'CANCELLED', /nothing was installed/, /kept/);
    assert.equal(await stat(dest).then(() => true, () => false), false);
    const partial = partialFolderFor(dest, files);
    assert.equal(await size(path.join(partial, 'model.onnx')), cutAt);

    log = [];
    await download(files);
    assert.deepEqual(log.find((s) => s.name === 'model.onnx'), { name: 'model.onnx', range: `bytes=${cutAt}-`, status: 206, bytesSent: model.length - cutAt });
    assert.deepEqual(await readFile(path.join(dest, 'model.onnx')), model);
  });

  it('resumes what a crashed process left, taking over its stale lock', async () => {
    const files = await serve();
    const partial = partialFolderFor(dest, files);
    await mkdir(partial, { recursive: true });
    await writeFile(path.join(partial, 'model.onnx'), model.subarray(0, cutAt));
    await writeFile(path.join(partial, 'tokenizer.json'), tokenizer); // complete: checked, not fetched again
    await writeFile(`${partial}.lock`, '2147483646'); // a process id that does not exist
    await download(files);
    assert.deepEqual(log.map((s) => [s.name, s.range]), [['model.onnx', `bytes=${cutAt}-`], ['tokenizer_config.json', undefined]]);
    assert.deepEqual(await readFile(path.join(dest, 'model.onnx')), model);
    assert.deepEqual(await entries(), ['tiny']);
  });

  it('keeps the partial bytes of different pins apart, and drops those of old pins once installed', async () => {
    const files = await serve();
    const other = files.map((f) => (f.name === 'model.onnx' ? { ...f, sha256: 'a'.repeat(64) } : f));
    assert.notEqual(partialFolderFor(dest, files), partialFolderFor(dest, other));
    assert.equal(partialFolderFor(dest, files), partialFolderFor(dest, pins(server!.base)), 'the same pins find the same folder');
    await mkdir(partialFolderFor(dest, other), { recursive: true });
    await writeFile(path.join(partialFolderFor(dest, other), 'model.onnx'), model.subarray(0, 100));
    await download(files);
    assert.deepEqual(await entries(), ['tiny'], 'bytes kept for pins that can no longer be installed are removed');
  });

  it('refuses a second download of the same files while one is under way', async () => {
    served.set('model.onnx', { body: model, firstAnswer: { bytes: cutAt, then: 'stall' } });
    const files = await serve();
    const controller = new AbortController();
    const first = download(files, { signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await rejectsWith(download(files), 'ENDPOINT_UNAVAILABLE', /already being downloaded/);
    controller.abort();
    await rejectsWith(first, 'CANCELLED');
  });

  it('gives up on a stalled server with TIMEOUT and keeps the bytes', async () => {
    served.set('model.onnx', { body: model, firstAnswer: { bytes: cutAt, then: 'stall' } });
    const files = await serve();
    await rejectsWith(download(files, { stallTimeoutMs: 150 }), 'TIMEOUT', /model\.onnx/, /stalled/);
    assert.equal(await size(path.join(partialFolderFor(dest, files), 'model.onnx')), cutAt);
  });

  it('says which pinned file is gone (404)', async () => {
    served.delete('tokenizer_config.json');
    const files = await serve();
    await rejectsWith(download(files), 'MODEL_INVALID', /tokenizer_config\.json/, /HTTP 404/);
  });

  it('refuses malformed pins before fetching anything', async () => {
    const base = { name: 'model.onnx', url: 'http://127.0.0.1:1/m/model.onnx', sha256: 'a'.repeat(64), bytes: 10 };
    await assert.rejects(download([{ ...base, sha256: 'xyz' }]), /must be 64 hex digits/);
    await assert.rejects(download([{ ...base, bytes: 0 }]), /whole number of bytes/);
    await assert.rejects(download([{ ...base, url: 'ftp://example.com/x' }]), /not an http\(s\) URL/);
    await assert.rejects(download([{ ...base, name: '../escape.onnx' }]), /plain relative path/);
    await assert.rejects(download([base, base]), /listed twice/);
    await assert.rejects(download([]), /at least one file/);
    await assert.rejects(downloadModelFiles({ files: [base], dest, extraFiles: { 'model.onnx': '{}' } }), /both downloaded and written/);
  });
});
