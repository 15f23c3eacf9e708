/**
 * A disk cache for tool embeddings, so a warm start embeds only tools it has not seen.
 *
 * One file per model (named by a hash of the model id) holds a checksummed header and binary Float32
 * entries keyed by sha256 of the text: the text itself never reaches the disk, so a secret pasted into a
 * tool description stays out of it. Another model's file is never touched except by the size bound, which
 * evicts least-recently-used entries (and whole files of models not in use) across the folder.
 *
 * File layout, little-endian:
 *   magic (8) | format version u32 | dimension u32 | entry count u32 | model id length u32 |
 *   sha256 checksum (32) of everything else | model id (UTF-8) | entries
 *   entry = sha256(text) (32) | last use, ms since epoch, f64 | dimension × f32
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir, rename, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type Embedder } from './embedder';
import { describeError } from '../errors/describeError';

/** Bump when the layout changes: older files are then ignored and rebuilt. */
export const CACHE_FORMAT_VERSION = 1;
export const CACHE_MAGIC = Buffer.from('MTREMBED', 'ascii');
export const CACHE_FILE_SUFFIX = '.embcache';
/**
 * All model files together stay under this: room for every tool of a large catalogue under several
 * models, yet small beside the editor's own storage.
 */
export const DEFAULT_CACHE_MAX_BYTES = 64 * 1024 * 1024;
/** Eviction goes down to this share of the bound, so the writes that follow do not evict again at once. */
export const EMBEDDING_CACHE_EVICTION_TARGET = 0.9;
/**
 * A read moves an entry's stored last use only after this long. LRU needs no finer grain, and a warm
 * start that only reads does not rewrite the file.
 */
export const LAST_USE_RESOLUTION_MS = 60 * 60 * 1000;
/** Hex characters of sha256(model id) in a file name: 128 bits, so two models never share a file. */
export const CACHE_FILE_NAME_HEX_CHARS = 32;
/** A temp file older than this was left by a writer that died (a write takes milliseconds): removed. */
export const STALE_TEMP_FILE_MS = 10 * 60 * 1000;
/**
 * Time between the last embed that added entries and the write. A start-up embeds each server's tools
 * as it connects; one write after the burst beats one per server.
 */
export const CACHE_FLUSH_DELAY_MS = 2000;

/** Larger vectors are not an embedding model's; a header claiming one is corrupt. */
const MAX_DIMENSION = 65_536;
/** Longest model id a header may claim. */
const MAX_MODEL_ID_BYTES = 4096;

const TEXT_HASH_BYTES = 32;
const LAST_USE_BYTES = 8;
/** magic, version, dimension, count, id length, checksum. */
const FIXED_HEADER_BYTES = CACHE_MAGIC.length + 4 * 4 + 32;
const CHECKSUM_OFFSET = CACHE_MAGIC.length + 4 * 4;
const CACHE_FILE_PATTERN = new RegExp(`^[0-9a-f]{${CACHE_FILE_NAME_HEX_CHARS}}\\${CACHE_FILE_SUFFIX}$`);
const TEMP_FILE_PATTERN = new RegExp(`^[0-9a-f]{${CACHE_FILE_NAME_HEX_CHARS}}\\${CACHE_FILE_SUFFIX}\\..+\\.tmp$`);

export interface EmbeddingCacheOptions {
  /** Bound on all model files together; least recently used entries go first. */
  readonly maxBytes?: number;
  /** Told when a file is ignored (corrupt, foreign, old format) or cannot be written. */
  readonly log?: (message: string) => void;
  /**
   * Writes a temp file; replaceable so tests can simulate a disk that fills up in the middle of a write.
   * The default is fs.writeFile.
   */
  readonly writeTempFile?: (file: string, data: Uint8Array) => Promise<void>;
}

/** Size of a model's cache file with `count` entries. */
export function cacheFileBytes(modelId: string, dimension: number, count: number): number {
  return FIXED_HEADER_BYTES + Buffer.byteLength(modelId, 'utf8') + count * entryBytes(dimension);
}

/** The file that holds a model's entries. */
export function cacheFileName(modelId: string): string {
  return `${createHash('sha256').update(modelId, 'utf8').digest('hex').slice(0, CACHE_FILE_NAME_HEX_CHARS)}${CACHE_FILE_SUFFIX}`;
}

function entryBytes(dimension: number): number {
  return TEXT_HASH_BYTES + LAST_USE_BYTES + 4 * dimension;
}

function textKey(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

interface Entry {
  readonly vector: Float32Array;
  lastUse: number;
  /** Last use as written in the file; a read that moves lastUse far from it makes the shard dirty. */
  storedLastUse: number;
}

/** One model's entries in memory. */
class Shard {
  dimension = 0;
  readonly entries = new Map<string, Entry>();
  /** Counts changes (new entries, eviction, a corrupt file to replace); `written` is the count on disk. */
  changes = 0;
  written = 0;

  get dirty(): boolean {
    return this.changes !== this.written;
  }

  markDirty(): void {
    this.changes++;
  }

  constructor(readonly modelId: string, readonly fileName: string) {}

  bytes(): number {
    return this.entries.size === 0 ? 0 : cacheFileBytes(this.modelId, this.dimension, this.entries.size);
  }
}

export class EmbeddingCache {
  private readonly shards = new Map<string, Promise<Shard>>();
  private readonly maxBytes: number;
  private readonly log: (message: string) => void;
  private readonly writeTempFile: (file: string, data: Uint8Array) => Promise<void>;
  /** Flushes run one at a time. */
  private flushing: Promise<void> = Promise.resolve();
  /** Last use stamps strictly increase within a process, so LRU order holds even within one millisecond. */
  private clock = 0;

  constructor(readonly folder: string, options: EmbeddingCacheOptions = {}) {
    this.maxBytes = options.maxBytes ?? DEFAULT_CACHE_MAX_BYTES;
    this.log = options.log ?? (() => undefined);
    this.writeTempFile = options.writeTempFile ?? ((file, data) => writeFile(file, data));
  }

  /** Cached vectors for `texts` under `modelId` (undefined where missing); each is a copy the caller may keep. */
  async get(modelId: string, texts: readonly string[]): Promise<Array<Float32Array | undefined>> {
    const shard = await this.shard(modelId);
    const now = this.tick();
    return texts.map((text) => {
      const entry = shard.entries.get(textKey(text));
      if (!entry) return undefined;
      entry.lastUse = now;
      if (now - entry.storedLastUse >= LAST_USE_RESOLUTION_MS) shard.markDirty();
      return entry.vector.slice();
    });
  }

  /** Stores vectors[i] for texts[i]. A vector of another length than the model's file replaces that file's entries. */
  async put(modelId: string, texts: readonly string[], vectors: readonly Float32Array[]): Promise<void> {
    if (texts.length !== vectors.length) throw new RangeError(`put() got ${texts.length} texts and ${vectors.length} vectors`);
    if (texts.length === 0) return;
    const shard = await this.shard(modelId);
    const now = this.tick();
    for (let i = 0; i < texts.length; i++) {
      const vector = vectors[i]!;
      if (vector.length === 0 || vector.length > MAX_DIMENSION) throw new RangeError(`cannot cache a vector of length ${vector.length}`);
      if (shard.dimension !== vector.length) {
        if (shard.entries.size > 0) {
          this.log(`Embedding cache: model ${modelId} now gives ${vector.length}-dimensional vectors instead of ${shard.dimension}; its ${shard.entries.size} cached entries are dropped.`);
          shard.entries.clear();
        }
        shard.dimension = vector.length;
      }
      shard.entries.set(textKey(texts[i]!), { vector: Float32Array.from(vector), lastUse: now, storedLastUse: Number.NEGATIVE_INFINITY });
    }
    shard.markDirty();
  }

  /**
   * Writes every changed model file (atomically: a temp file in the same folder, then rename), after
   * evicting down to the size bound. Failures are logged, not thrown: a cache that cannot write only
   * costs a re-embed next time, and the changes stay pending for the next flush.
   */
  flush(): Promise<void> {
    const run = this.flushing.then(() => this.flushNow());
    this.flushing = run.catch(() => undefined);
    return run;
  }

  /** Bytes of all model files in the folder, as on disk now. */
  async sizeOnDisk(): Promise<number> {
    let total = 0;
    for (const file of await this.cacheFiles()) total += file.size;
    return total;
  }

  private tick(): number {
    this.clock = Math.max(Date.now(), this.clock + 1);
    return this.clock;
  }

  private shard(modelId: string): Promise<Shard> {
    let shard = this.shards.get(modelId);
    if (!shard) {
      shard = this.load(modelId);
      this.shards.set(modelId, shard);
    }
    return shard;
  }

  private async load(modelId: string): Promise<Shard> {
    const shard = new Shard(modelId, cacheFileName(modelId));
    const file = path.join(this.folder, shard.fileName);
    let bytes: Buffer;
    try {
      bytes = await readFile(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') this.log(`Embedding cache: could not read ${file} (${describeError(error)}); starting empty.`);
      return shard;
    }
    const problem = this.parseInto(shard, bytes);
    if (problem) {
      this.log(`Embedding cache: ignored ${file}: ${problem}. It will be rebuilt.`);
      shard.entries.clear();
      shard.dimension = 0;
      shard.markDirty(); // replace (or remove) the bad file at the next flush
    }
    return shard;
  }

  /** Fills the shard from a file's bytes; returns what is wrong with them, if anything. Nothing is trusted unchecked. */
  private parseInto(shard: Shard, bytes: Buffer): string | undefined {
    if (bytes.length < FIXED_HEADER_BYTES) return `it is ${bytes.length} bytes, shorter than a header (truncated)`;
    if (!bytes.subarray(0, CACHE_MAGIC.length).equals(CACHE_MAGIC)) return 'it is not an embedding cache file (wrong magic)';
    let offset = CACHE_MAGIC.length;
    const version = bytes.readUInt32LE(offset);
    const dimension = bytes.readUInt32LE(offset + 4);
    const count = bytes.readUInt32LE(offset + 8);
    const idLength = bytes.readUInt32LE(offset + 12);
    if (version !== CACHE_FORMAT_VERSION) return `it has format version ${version}, this build reads ${CACHE_FORMAT_VERSION}`;
    if (idLength > MAX_MODEL_ID_BYTES || FIXED_HEADER_BYTES + idLength > bytes.length) return 'its model id runs past the end (truncated or corrupt)';
    offset = FIXED_HEADER_BYTES;
    const storedId = bytes.toString('utf8', offset, offset + idLength);
    if (storedId !== shard.modelId) return `it belongs to model ${JSON.stringify(storedId.slice(0, 200))}, not ${JSON.stringify(shard.modelId)}`;
    if (dimension < 1 || dimension > MAX_DIMENSION) return `its dimension ${dimension} is impossible (corrupt)`;
    const expected = cacheFileBytes(shard.modelId, dimension, count);
    if (bytes.length !== expected) return `it is ${bytes.length} bytes but its header promises ${expected} (truncated or corrupt)`;
    if (!checksum(bytes).equals(bytes.subarray(CHECKSUM_OFFSET, CHECKSUM_OFFSET + 32))) return 'its checksum does not match (corrupt)';
    offset += idLength;
    const size = entryBytes(dimension);
    shard.dimension = dimension;
    for (let i = 0; i < count; i++, offset += size) {
      const key = bytes.toString('hex', offset, offset + TEXT_HASH_BYTES);
      const lastUse = bytes.readDoubleLE(offset + TEXT_HASH_BYTES);
      // Later stamps of this process must sort after what an earlier one (maybe in the same ms) stored.
      if (lastUse > this.clock && lastUse <= Date.now() + LAST_USE_RESOLUTION_MS) this.clock = lastUse;
      const vectorStart = offset + TEXT_HASH_BYTES + LAST_USE_BYTES;
      // Copy out: the entries must not keep the whole file's buffer alive, and offsets may be unaligned.
      const vector = new Float32Array(bytes.buffer.slice(bytes.byteOffset + vectorStart, bytes.byteOffset + vectorStart + 4 * dimension));
      shard.entries.set(key, { vector, lastUse, storedLastUse: lastUse });
    }
    return undefined;
  }

  private async flushNow(): Promise<void> {
    const shards = await Promise.all(this.shards.values());
    if (!shards.some((s) => s.dirty)) return;
    try {
      await mkdir(this.folder, { recursive: true });
    } catch (error) {
      this.log(`Embedding cache: could not create ${this.folder} (${describeError(error)}); embeddings will be recomputed next time.`);
      return;
    }
    await this.evict(shards);
    for (const shard of shards) {
      if (shard.dirty) await this.write(shard);
    }
  }

  /** Least-recently-used eviction across the folder: loaded entries by last use, other models' files by mtime. */
  private async evict(shards: readonly Shard[]): Promise<void> {
    const loaded = new Set(shards.map((s) => s.fileName));
    const others = (await this.cacheFiles()).filter((f) => !loaded.has(f.name));
    let total = shards.reduce((sum, s) => sum + s.bytes(), 0) + others.reduce((sum, f) => sum + f.size, 0);
    if (total <= this.maxBytes) return;
    const target = this.maxBytes * EMBEDDING_CACHE_EVICTION_TARGET;
    type Candidate = { lastUse: number; evict: () => Promise<number> };
    const candidates: Candidate[] = others.map((f) => ({
      lastUse: f.mtimeMs,
      evict: async () => {
        try {
          await unlink(path.join(this.folder, f.name));
          return f.size;
        } catch {
          return 0;
        }
      },
    }));
    for (const shard of shards) {
      for (const [key, entry] of shard.entries) {
        candidates.push({
          lastUse: entry.lastUse,
          evict: async () => {
            const before = shard.bytes();
            shard.entries.delete(key);
            shard.markDirty();
            return before - shard.bytes();
          },
        });
      }
    }
    candidates.sort((a, b) => a.lastUse - b.lastUse);
    for (const candidate of candidates) {
      if (total <= target) break;
      total -= await candidate.evict();
    }
  }

  private async write(shard: Shard): Promise<void> {
    const file = path.join(this.folder, shard.fileName);
    // Gets and puts may run while the file is written: only what was encoded counts as written.
    const changes = shard.changes;
    if (shard.entries.size === 0) {
      // Nothing left (all evicted, or a corrupt file with nothing to replace it): remove the file.
      await unlink(file).catch(() => undefined);
      shard.written = changes;
      return;
    }
    const stamps = [...shard.entries.values()].map((entry) => [entry, entry.lastUse] as const);
    const bytes = this.encode(shard);
    const temp = `${file}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
    try {
      await this.writeTempFile(temp, bytes);
      await rename(temp, file);
    } catch (error) {
      await unlink(temp).catch(() => undefined);
      this.log(`Embedding cache: could not write ${file} (${describeError(error)}); the previous file is kept and the new entries stay in memory until the next try.`);
      return;
    }
    for (const [entry, lastUse] of stamps) entry.storedLastUse = lastUse;
    shard.written = changes;
  }

  private encode(shard: Shard): Buffer {
    const bytes = Buffer.alloc(shard.bytes());
    CACHE_MAGIC.copy(bytes, 0);
    let offset = CACHE_MAGIC.length;
    const id = Buffer.from(shard.modelId, 'utf8');
    offset = bytes.writeUInt32LE(CACHE_FORMAT_VERSION, offset);
    offset = bytes.writeUInt32LE(shard.dimension, offset);
    offset = bytes.writeUInt32LE(shard.entries.size, offset);
    bytes.writeUInt32LE(id.length, offset);
    offset = FIXED_HEADER_BYTES;
    offset += id.copy(bytes, offset);
    for (const [key, entry] of shard.entries) {
      offset += bytes.write(key, offset, 'hex');
      offset = bytes.writeDoubleLE(entry.lastUse, offset);
      offset += Buffer.from(entry.vector.buffer, entry.vector.byteOffset, entry.vector.byteLength).copy(bytes, offset);
    }
    checksum(bytes).copy(bytes, CHECKSUM_OFFSET);
    return bytes;
  }

  /** Our model files in the folder (other files are never touched); removes temp files left by a crash. */
  private async cacheFiles(): Promise<Array<{ name: string; size: number; mtimeMs: number }>> {
    let names: string[];
    try {
      names = await readdir(this.folder);
    } catch {
      return [];
    }
    const files: Array<{ name: string; size: number; mtimeMs: number }> = [];
    for (const name of names) {
      const isCache = CACHE_FILE_PATTERN.test(name);
      if (!isCache && !TEMP_FILE_PATTERN.test(name)) continue;
      try {
        const info = await stat(path.join(this.folder, name));
        if (!info.isFile()) continue;
        if (isCache) files.push({ name, size: info.size, mtimeMs: info.mtimeMs });
        else if (Date.now() - info.mtimeMs > STALE_TEMP_FILE_MS) await unlink(path.join(this.folder, name));
      } catch {
        // gone meanwhile: another window's flush
      }
    }
    return files;
  }
}

/** sha256 over the file with the checksum field left out. */
function checksum(bytes: Buffer): Buffer {
  return createHash('sha256').update(bytes.subarray(0, CHECKSUM_OFFSET)).update(bytes.subarray(CHECKSUM_OFFSET + 32)).digest();
}

export interface CachedEmbedderOptions {
  readonly flushDelayMs?: number;
}

/**
 * Any embedder, with the disk cache in front: only texts not cached under its model id are embedded, and
 * new vectors are written shortly after (debounced). Meant for tool texts, which repeat across starts;
 * queries rarely repeat and are better sent to the inner embedder directly.
 */
export class CachedEmbedder implements Embedder {
  private timer: NodeJS.Timeout | undefined;
  private cachedDimension = 0;

  constructor(
    private readonly inner: Embedder,
    private readonly cache: EmbeddingCache,
    private readonly options: CachedEmbedderOptions = {},
  ) {}

  get modelId(): string {
    return this.inner.modelId;
  }

  get dimension(): number {
    return this.inner.dimension || this.cachedDimension;
  }

  get concurrentCalls(): number | undefined {
    return this.inner.concurrentCalls;
  }

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const modelId = this.inner.modelId;
    const found = await this.cache.get(modelId, texts);
    const missing = [...new Set(texts.filter((_, i) => found[i] === undefined))];
    if (missing.length > 0) {
      const vectors = await this.inner.embed(missing, signal);
      await this.cache.put(modelId, missing, vectors);
      this.scheduleFlush();
      const byText = new Map(missing.map((text, i) => [text, vectors[i]!]));
      texts.forEach((text, i) => {
        // A text repeated in one call gets its own copy, as cached ones do.
        found[i] ??= byText.get(text)!.slice();
      });
    }
    const result = found as Float32Array[];
    if (result.length > 0) this.cachedDimension = result[0]!.length;
    return result;
  }

  /** Writes pending entries now. */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.cache.flush();
  }

  /** Flushes, then disposes the inner embedder. */
  async dispose(): Promise<void> {
    await this.flush();
    await this.inner.dispose();
  }

  private scheduleFlush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.cache.flush();
    }, this.options.flushDelayMs ?? CACHE_FLUSH_DELAY_MS);
    // Never keeps a CLI alive; it calls dispose() (which flushes) before exiting.
    this.timer.unref();
  }
}
