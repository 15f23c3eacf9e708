import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type Embedder } from '../../../src/core/embedding/embedder';
import {
  CACHE_FORMAT_VERSION, CACHE_MAGIC, CachedEmbedder, EMBEDDING_CACHE_EVICTION_TARGET, EmbeddingCache, STALE_TEMP_FILE_MS, cacheFileBytes, cacheFileName,
} from '../../../src/core/embedding/embeddingCache';
import { OnnxEmbedder } from '../../../src/core/embedding/onnxEmbedder';
import { writeTinyBertFolder } from './tinyBertFolder';

const MODEL_A = 'onnx:tiny:0123456789ab:mean:none:256';
const MODEL_B = 'http:ollama:127.0.0.1:11434:nomic-embed-text';

/** The smallest bound under which `bytes` survive an eviction (which goes down to a share of the bound). */
function boundKeeping(bytes: number): number {
  return Math.ceil(bytes / EMBEDDING_CACHE_EVICTION_TARGET) + 1;
}

function vec(...values: number[]): Float32Array {
  return Float32Array.from(values);
}

/** Counts what reaches the wrapped embedder, so cache hits can be told from misses. */
class CountingEmbedder implements Embedder {
  readonly calls: string[][] = [];
  constructor(private readonly inner: Embedder) {}
  get modelId(): string {
    return this.inner.modelId;
  }
  get dimension(): number {
    return this.inner.dimension;
  }
  embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    this.calls.push([...texts]);
    return this.inner.embed(texts, signal);
  }
  dispose(): Promise<void> {
    return this.inner.dispose();
  }
}

async function waitFor(condition: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.fail(`timed out waiting for ${what}`);
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(() => true, () => false);
}

describe('EmbeddingCache', () => {
  let root: string;
  let folder: string;
  let logs: string[];
  let count = 0;

  function cache(options: { maxBytes?: number; writeTempFile?: (file: string, data: Uint8Array) => Promise<void> } = {}): EmbeddingCache {
    return new EmbeddingCache(folder, { log: (m) => logs.push(m), ...options });
  }

  function fileOf(modelId: string): string {
    return path.join(folder, cacheFileName(modelId));
  }

  before(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'embedding-cache-'));
  });

  beforeEach(async () => {
    folder = path.join(root, `cache-${++count}`);
    logs = [];
  });

  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  describe('hits and misses', () => {
    it('misses, then hits after put, and hands out copies', async () => {
      const c = cache();
      assert.deepEqual(await c.get(MODEL_A, ['read a file']), [undefined]);
      await c.put(MODEL_A, ['read a file', 'search the web'], [vec(1, 0, 0), vec(0, 1, 0)]);
      const [a, b, missing] = await c.get(MODEL_A, ['read a file', 'search the web', 'send mail']);
      assert.deepEqual(Array.from(a!), [1, 0, 0]);
      assert.deepEqual(Array.from(b!), [0, 1, 0]);
      assert.equal(missing, undefined);
      a![0] = 42;
      assert.deepEqual(Array.from((await c.get(MODEL_A, ['read a file']))[0]!), [1, 0, 0], 'the cache kept its own copy');
      assert.deepEqual(await c.get(MODEL_B, ['read a file']), [undefined], 'keyed by model id');
    });

    it('persists across instances after flush, in one compact file per model', async () => {
      const c = cache();
      await c.put(MODEL_A, ['a', 'b', 'c'], [vec(0.5, 0.25), vec(-1, 2), vec(3, 4)]);
      assert.equal(await exists(fileOf(MODEL_A)), false, 'nothing written before flush');
      await c.flush();
      assert.equal((await stat(fileOf(MODEL_A))).size, cacheFileBytes(MODEL_A, 2, 3));
      assert.equal(await c.sizeOnDisk(), cacheFileBytes(MODEL_A, 2, 3));
      const again = await cache().get(MODEL_A, ['c', 'a', 'x']);
      assert.deepEqual(again.map((v) => v && Array.from(v)), [[3, 4], [0.5, 0.25], undefined]);
      assert.deepEqual(logs, []);
    });

    it('never writes the texts, only their hashes', async () => {
      const secret = 'Uses token ghp_9f8e7d6c5b4a3210SECRET to call the API';
      const c = cache();
      await c.put(MODEL_A, [secret, 'plain'], [vec(1, 2), vec(3, 4)]);
      await c.flush();
      for (const name of await readdir(folder)) {
        const bytes = await readFile(path.join(folder, name));
        for (const encoding of ['utf8', 'latin1', 'utf16le'] as const) {
          assert.ok(!bytes.toString(encoding).includes('ghp_9f8e7d6c5b4a3210SECRET'), `${name} holds the secret (${encoding})`);
          assert.ok(!bytes.toString(encoding).includes('plain'), `${name} holds a text (${encoding})`);
        }
      }
    });

    it('drops a model\'s entries when its vectors change length, and says so', async () => {
      const c = cache();
      await c.put(MODEL_B, ['a'], [vec(1, 2)]);
      await c.put(MODEL_B, ['b'], [vec(1, 2, 3)]);
      assert.deepEqual((await c.get(MODEL_B, ['a', 'b'])).map((v) => v?.length), [undefined, 3]);
      assert.match(logs.join('\n'), /now gives 3-dimensional vectors instead of 2; its 1 cached entries are dropped/);
    });
  });

  describe('corrupt and foreign files', () => {
    async function writeValidFile(): Promise<Buffer> {
      const c = cache();
      await c.put(MODEL_A, ['a', 'b'], [vec(1, 2, 3), vec(4, 5, 6)]);
      await c.flush();
      return readFile(fileOf(MODEL_A));
    }

    async function expectIgnoredAndRebuilt(problem: RegExp): Promise<void> {
      const c = cache();
      assert.deepEqual(await c.get(MODEL_A, ['a', 'b']), [undefined, undefined], 'nothing trusted');
      assert.equal(logs.length, 1, logs.join('\n'));
      assert.match(logs[0]!, new RegExp(`ignored ${fileOf(MODEL_A).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
      assert.match(logs[0]!, problem);
      assert.match(logs[0]!, /It will be rebuilt/);
      await c.put(MODEL_A, ['a'], [vec(7, 8, 9)]);
      await c.flush();
      logs = [];
      const [a, b] = await cache().get(MODEL_A, ['a', 'b']);
      assert.deepEqual(Array.from(a!), [7, 8, 9], 'rebuilt file is read back');
      assert.equal(b, undefined);
      assert.deepEqual(logs, []);
    }

    it('detects a flipped byte in a vector (checksum)', async () => {
      const bytes = await writeValidFile();
      bytes[bytes.length - 3]! ^= 0xff;
      await writeFile(fileOf(MODEL_A), bytes);
      await expectIgnoredAndRebuilt(/checksum does not match/);
    });

    it('detects a flipped byte in the header', async () => {
      const bytes = await writeValidFile();
      bytes[CACHE_MAGIC.length + 8]! ^= 0x01; // entry count
      await writeFile(fileOf(MODEL_A), bytes);
      await expectIgnoredAndRebuilt(/header promises/);
    });

    it('detects a truncated file', async () => {
      const bytes = await writeValidFile();
      await writeFile(fileOf(MODEL_A), bytes.subarray(0, bytes.length - 10));
      await expectIgnoredAndRebuilt(/truncated/);
    });

    it('detects a file cut inside its header', async () => {
      const bytes = await writeValidFile();
      await writeFile(fileOf(MODEL_A), bytes.subarray(0, 20));
      await expectIgnoredAndRebuilt(/shorter than a header/);
    });

    it('detects a foreign file under the model\'s name', async () => {
      await mkdir(folder, { recursive: true });
      await writeFile(fileOf(MODEL_A), JSON.stringify({ vectors: [[1, 2, 3]] }).padEnd(200, ' '));
      await expectIgnoredAndRebuilt(/not an embedding cache file/);
    });

    it('detects another model\'s file under this model\'s name', async () => {
      const c = cache();
      await c.put(MODEL_B, ['a'], [vec(1, 2, 3)]);
      await c.flush();
      await writeFile(fileOf(MODEL_A), await readFile(fileOf(MODEL_B)));
      await expectIgnoredAndRebuilt(/belongs to model "http:ollama/);
    });

    it('detects a file of another format version', async () => {
      const bytes = await writeValidFile();
      bytes.writeUInt32LE(CACHE_FORMAT_VERSION + 1, CACHE_MAGIC.length);
      await writeFile(fileOf(MODEL_A), bytes);
      await expectIgnoredAndRebuilt(new RegExp(`format version ${CACHE_FORMAT_VERSION + 1}`));
    });

    it('removes a bad file at the next flush even when nothing replaces it', async () => {
      await mkdir(folder, { recursive: true });
      await writeFile(fileOf(MODEL_A), 'garbage');
      const c = cache();
      await c.get(MODEL_A, ['a']);
      await c.flush();
      assert.equal(await exists(fileOf(MODEL_A)), false);
    });
  });

  describe('models and the size bound', () => {
    it('keeps other models\' entries when the model changes', async () => {
      const c = cache();
      await c.put(MODEL_A, ['read'], [vec(1, 0)]);
      await c.flush();
      await c.put(MODEL_B, ['read'], [vec(0, 1, 0)]);
      await c.flush();
      const fresh = cache();
      assert.deepEqual(Array.from((await fresh.get(MODEL_A, ['read']))[0]!), [1, 0]);
      assert.deepEqual(Array.from((await fresh.get(MODEL_B, ['read']))[0]!), [0, 1, 0]);
      assert.equal(await fresh.sizeOnDisk(), cacheFileBytes(MODEL_A, 2, 1) + cacheFileBytes(MODEL_B, 3, 1));
    });

    it('evicts the least recently used entries beyond the bound', async () => {
      const dim = 4;
      // Three entries survive an eviction; a fourth overflows the bound.
      const c = cache({ maxBytes: boundKeeping(cacheFileBytes(MODEL_A, dim, 3)) });
      assert.ok(boundKeeping(cacheFileBytes(MODEL_A, dim, 3)) < cacheFileBytes(MODEL_A, dim, 4));
      await c.put(MODEL_A, ['a'], [vec(1, 0, 0, 0)]);
      await c.put(MODEL_A, ['b'], [vec(0, 1, 0, 0)]);
      await c.put(MODEL_A, ['c'], [vec(0, 0, 1, 0)]);
      await c.get(MODEL_A, ['a']); // a is now more recent than b
      await c.put(MODEL_A, ['d'], [vec(0, 0, 0, 1)]);
      await c.flush();
      assert.equal(await c.sizeOnDisk(), cacheFileBytes(MODEL_A, dim, 3));
      const hits = await cache().get(MODEL_A, ['a', 'b', 'c', 'd']);
      assert.deepEqual(hits.map((v) => v !== undefined), [true, false, true, true], 'b, the least recently used, is gone');
    });

    it('keeps last use across instances, so eviction order survives a restart', async () => {
      const dim = 2;
      const first = cache();
      await first.put(MODEL_A, ['old'], [vec(1, 0)]);
      await first.put(MODEL_A, ['new'], [vec(0, 1)]);
      await first.flush();
      const second = cache({ maxBytes: boundKeeping(cacheFileBytes(MODEL_A, dim, 2)) });
      await second.put(MODEL_A, ['newest'], [vec(1, 1)]);
      await second.flush();
      const hits = await cache().get(MODEL_A, ['old', 'new', 'newest']);
      assert.deepEqual(hits.map((v) => v !== undefined), [false, true, true]);
    });

    it('evicts a model file not used for longest before the current model\'s entries', async () => {
      const setup = cache();
      await setup.put(MODEL_B, ['x', 'y'], [vec(1, 2, 3, 4), vec(5, 6, 7, 8)]);
      await setup.flush();
      const longAgo = new Date(Date.now() - 30 * 24 * 3600 * 1000);
      await utimes(fileOf(MODEL_B), longAgo, longAgo);
      const c = cache({ maxBytes: boundKeeping(cacheFileBytes(MODEL_A, 4, 3)) });
      await c.put(MODEL_A, ['a', 'b', 'c'], [vec(1, 0, 0, 0), vec(0, 1, 0, 0), vec(0, 0, 1, 0)]);
      await c.flush();
      assert.equal(await exists(fileOf(MODEL_B)), false, 'the unused model went first');
      assert.deepEqual((await cache().get(MODEL_A, ['a', 'b', 'c'])).map((v) => v !== undefined), [true, true, true]);
    });

    it('leaves files that are not its own alone', async () => {
      await mkdir(folder, { recursive: true });
      await writeFile(path.join(folder, 'notes.txt'), 'x'.repeat(10_000));
      const c = cache({ maxBytes: 1000 });
      await c.put(MODEL_A, ['a'], [vec(1)]);
      await c.flush();
      assert.equal(await exists(path.join(folder, 'notes.txt')), true);
      assert.equal(await c.sizeOnDisk(), cacheFileBytes(MODEL_A, 1, 1));
    });
  });

  describe('atomic writes', () => {
    it('keeps the previous file and leaves no partial file when the disk fills in the middle of a write', async () => {
      let failWrites = false;
      const c = cache({
        writeTempFile: async (file, data) => {
          if (!failWrites) return writeFile(file, data);
          await writeFile(file, data.subarray(0, Math.floor(data.length / 2)));
          throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
        },
      });
      await c.put(MODEL_A, ['a'], [vec(1, 2)]);
      await c.flush();
      const before = await readFile(fileOf(MODEL_A));

      failWrites = true;
      await c.put(MODEL_A, ['b'], [vec(3, 4)]);
      await c.flush();
      assert.deepEqual(await readFile(fileOf(MODEL_A)), before, 'the old file is untouched');
      assert.deepEqual(await readdir(folder), [cacheFileName(MODEL_A)], 'no temp file left behind');
      assert.match(logs.join('\n'), /could not write .*ENOSPC.*the previous file is kept/);

      failWrites = false;
      await c.flush(); // the pending entry is written on the next try
      assert.deepEqual((await cache().get(MODEL_A, ['a', 'b'])).map((v) => v && Array.from(v)), [[1, 2], [3, 4]]);
    });

    it('leaves no temp file when the rename fails', async () => {
      await mkdir(path.join(fileOf(MODEL_A), 'blocker'), { recursive: true }); // a directory where the file should go
      const c = cache();
      await c.put(MODEL_A, ['a'], [vec(1, 2)]);
      await c.flush();
      assert.deepEqual(await readdir(folder), [cacheFileName(MODEL_A)]);
      assert.ok((await stat(fileOf(MODEL_A))).isDirectory());
      assert.match(logs.join('\n'), /could not write/);
    });

    it('clears temp files a crashed writer left behind', async () => {
      await mkdir(folder, { recursive: true });
      const stale = path.join(folder, `${cacheFileName(MODEL_A)}.123-abcd.tmp`);
      const fresh = path.join(folder, `${cacheFileName(MODEL_B)}.456-abcd.tmp`);
      await writeFile(stale, 'partial');
      await writeFile(fresh, 'being written by another window');
      const old = new Date(Date.now() - 2 * STALE_TEMP_FILE_MS);
      await utimes(stale, old, old);
      await cache().sizeOnDisk();
      assert.equal(await exists(stale), false);
      assert.equal(await exists(fresh), true);
    });
  });
});

describe('CachedEmbedder', function () {
  this.timeout(20_000); // runs the real onnxruntime; generous for a busy machine
  let root: string;
  let model: string;

  before(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'cached-embedder-'));
    model = await writeTinyBertFolder(path.join(root, 'tiny'));
  });

  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('embeds only misses, once per distinct text, and returns what the model would', async () => {
    const onnx = await OnnxEmbedder.load(model);
    const counting = new CountingEmbedder(onnx);
    const cacheFolder = path.join(root, 'cache-1');
    const cached = new CachedEmbedder(counting, new EmbeddingCache(cacheFolder), { flushDelayMs: 60_000 });
    assert.equal(cached.modelId, onnx.modelId);

    const first = await cached.embed(['read file', 'search the web', 'read file']);
    assert.deepEqual(counting.calls, [['read file', 'search the web']]);
    const second = await cached.embed(['search the web', 'send mail', 'read file']);
    assert.deepEqual(counting.calls[1], ['send mail']);
    assert.deepEqual(Array.from(second[0]!), Array.from(first[1]!));
    assert.deepEqual(Array.from(second[2]!), Array.from(first[0]!));
    const direct = await onnx.embed(['send mail']);
    assert.deepEqual(Array.from(second[1]!), Array.from(direct[0]!));
    assert.equal(cached.dimension, 8);

    assert.equal(await exists(path.join(cacheFolder, cacheFileName(onnx.modelId))), false, 'the write waits for the debounce');
    await cached.dispose();
    assert.equal(await exists(path.join(cacheFolder, cacheFileName(onnx.modelId))), true, 'dispose flushes');

    // A warm start: everything comes from disk, the model is not asked.
    const warmCounting = new CountingEmbedder(await OnnxEmbedder.load(model));
    const warm = new CachedEmbedder(warmCounting, new EmbeddingCache(cacheFolder));
    const again = await warm.embed(['read file', 'send mail']);
    assert.deepEqual(warmCounting.calls, []);
    assert.deepEqual(Array.from(again[1]!), Array.from(direct[0]!));
    assert.equal(warm.dimension, 8, 'known from the cache before the model ran');
    await warm.dispose();
  });

  it('writes after the debounce delay without being asked', async () => {
    const onnx = await OnnxEmbedder.load(model);
    const cacheFolder = path.join(root, 'cache-2');
    const cached = new CachedEmbedder(onnx, new EmbeddingCache(cacheFolder), { flushDelayMs: 5 });
    await cached.embed(['list files']);
    await waitFor(() => exists(path.join(cacheFolder, cacheFileName(onnx.modelId))), 'the debounced write');
    await cached.dispose();
  });

  it('keeps the previous model\'s entries when the model (pooling) changes', async () => {
    const cacheFolder = path.join(root, 'cache-3');
    const mean = new CachedEmbedder(await OnnxEmbedder.load(model), new EmbeddingCache(cacheFolder));
    await mean.embed(['open file']);
    await mean.dispose();
    const clsInner = new CountingEmbedder(await OnnxEmbedder.load(model, { pooling: 'cls' }));
    const cls = new CachedEmbedder(clsInner, new EmbeddingCache(cacheFolder));
    await cls.embed(['open file']);
    assert.deepEqual(clsInner.calls, [['open file']], 'a new model id misses');
    await cls.dispose();
    const meanAgainInner = new CountingEmbedder(await OnnxEmbedder.load(model));
    const meanAgain = new CachedEmbedder(meanAgainInner, new EmbeddingCache(cacheFolder));
    await meanAgain.embed(['open file']);
    assert.deepEqual(meanAgainInner.calls, [], 'the first model\'s entries are still there');
    await meanAgain.dispose();
    assert.equal((await readdir(cacheFolder)).length, 2);
  });
});
