import { mkdir, readFile, rename, rm, stat } from 'node:fs/promises';
import * as path from 'node:path';
import { writeFileAtomic } from '../util/atomicWrite';
import type { UsageRecord, UsageSource } from './usageMemory';
import { describeError } from '../errors/describeError';

/**
 * The use memory on disk: one JSONL file in a folder the caller gives (the extension passes the
 * workspace's own storage, so records stay per workspace and on this machine). The first line is a
 * header; each further line is one record: time, prompt, source, tool names, and the prompt's vector
 * with its model id. Nothing else is written. Saves are atomic (a temp file, then rename); a file that
 * cannot be read is kept aside as `.corrupt`, and learning starts afresh with a clear message.
 */

export const USAGE_FILE_NAME = 'tool-usage.jsonl';
export const USAGE_FILE_FORMAT = 'mcp-tool-router/tool-usage';
export const USAGE_FILE_VERSION = 1;
/** Suffix of a file that could not be read, kept for a look instead of being overwritten. */
export const CORRUPT_SUFFIX = '.corrupt';
/**
 * Writes wait this long after a change, so a burst of records (an agent calling several tools) is one
 * write, while a window closed right after a turn still has it saved by `flush` on dispose.
 */
export const DEFAULT_SAVE_DELAY_MS = 2000;
/**
 * A file larger than this is not ours: 2,000 records with 384-dimension vectors take about 6 MB, and a
 * larger embedding model's vectors (1,536 dimensions) about 20 MB.
 */
const MAX_FILE_BYTES = 64 * 1024 * 1024;
/** The widest embedding we expect; a vector claiming more is corrupt. */
const MAX_VECTOR_DIMENSION = 8192;

export class UsageFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageFileError';
  }
}

/** The file's text: a header line, then one JSON line per record. */
export function serializeUsageRecords(records: readonly UsageRecord[]): string {
  const header = { format: USAGE_FILE_FORMAT, version: USAGE_FILE_VERSION, note: 'Prompts and the MCP tools they needed, kept on this machine only by MCP Tool Router.' };
  const lines = [JSON.stringify(header)];
  for (const r of records) {
    lines.push(
      JSON.stringify({
        at: r.at,
        prompt: r.prompt,
        ...(r.source ? { source: r.source } : {}),
        offered: r.offered,
        called: r.called,
        misses: r.misses,
        ...(r.vector ? { modelId: r.modelId ?? '', vector: encodeVector(r.vector) } : {}),
      }),
    );
  }
  return `${lines.join('\n')}\n`;
}

/** Parses a usage file's text; throws a UsageFileError naming the line and what is wrong with it. */
export function parseUsageRecords(text: string, file = USAGE_FILE_NAME): UsageRecord[] {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  if (lines.length === 0) throw new UsageFileError(`${file} is empty (no header line).`);
  const header = parseLine(lines[0]!, file, 1) as { format?: unknown; version?: unknown };
  if (header.format !== USAGE_FILE_FORMAT) throw new UsageFileError(`${file}, line 1: not a tool usage file (format "${String(header.format)}", expected "${USAGE_FILE_FORMAT}").`);
  if (header.version !== USAGE_FILE_VERSION) throw new UsageFileError(`${file}, line 1: version ${String(header.version)} is not ${USAGE_FILE_VERSION}; it was written by another version of MCP Tool Router.`);
  return lines.slice(1).map((line, i) => parseRecord(parseLine(line, file, i + 2), file, i + 2));
}

/** Reads a usage file written by the extension (or by hand in this format); for the CLI. */
export async function readUsageFile(file: string): Promise<UsageRecord[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageFileError(`Cannot read the records file ${file}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'it does not exist' : describeError(error)}.`);
  }
  return parseUsageRecords(text, file);
}

export interface UsageStoreOptions {
  /** Told when the file is kept aside or cannot be written. */
  readonly log?: (message: string) => void;
  readonly saveDelayMs?: number;
}

export class UsageStore {
  readonly file: string;
  private readonly log: (message: string) => void;
  private readonly saveDelayMs: number;
  private writing: Promise<void> = Promise.resolve();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private pending: (() => readonly UsageRecord[]) | undefined;

  constructor(readonly folder: string, options: UsageStoreOptions = {}) {
    this.file = path.join(folder, USAGE_FILE_NAME);
    this.log = options.log ?? (() => undefined);
    this.saveDelayMs = options.saveDelayMs ?? DEFAULT_SAVE_DELAY_MS;
  }

  /**
   * The stored records; none when there is no file. A file that cannot be read (corrupt, truncated,
   * another format) is renamed to `.corrupt`, the log is told why, and the result is empty.
   */
  async load(): Promise<UsageRecord[]> {
    let text: string;
    try {
      const info = await stat(this.file);
      if (info.size > MAX_FILE_BYTES) return await this.keepAside(`it is ${info.size} bytes, more than a usage file can be`);
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      this.log(`The learned tool usage in ${this.file} could not be read (${describeError(error)}); learning starts empty this session.`);
      return [];
    }
    try {
      return parseUsageRecords(text, this.file);
    } catch (error) {
      return this.keepAside(describeError(error));
    }
  }

  /** Writes the records now (atomically), after any write already under way. */
  save(records: readonly UsageRecord[]): Promise<void> {
    const text = serializeUsageRecords(records);
    const run = this.writing.then(() => this.write(text));
    this.writing = run.catch(() => undefined);
    return run;
  }

  /** Saves `records()` after the save delay; repeated calls within it make one write. */
  saveSoon(records: () => readonly UsageRecord[]): void {
    this.pending = records;
    this.timer ??= setTimeout(() => void this.flush(), this.saveDelayMs);
  }

  /** Runs a pending delayed save now; resolves when every write has finished. Write errors are logged. */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const pending = this.pending;
    this.pending = undefined;
    if (pending) {
      try {
        await this.save(pending());
      } catch (error) {
        this.log(`Saving the learned tool usage to ${this.file} failed: ${describeError(error)}`);
      }
    }
    await this.writing;
  }

  /** Deletes the file and any copy kept aside (the records held what the user typed). */
  async delete(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.pending = undefined;
    await this.writing;
    await rm(this.file, { force: true });
    await rm(`${this.file}${CORRUPT_SUFFIX}`, { force: true });
  }

  private async write(text: string): Promise<void> {
    await mkdir(this.folder, { recursive: true });
    await writeFileAtomic(this.file, text, { mode: 0o600 });
  }

  private async keepAside(reason: string): Promise<UsageRecord[]> {
    const aside = `${this.file}${CORRUPT_SUFFIX}`;
    try {
      await rename(this.file, aside);
      this.log(`The learned tool usage could not be read (${reason}). It was kept aside as ${aside}, and learning starts afresh; delete that file once you no longer need it.`);
    } catch (error) {
      this.log(`The learned tool usage could not be read (${reason}), nor kept aside (${describeError(error)}); learning starts afresh and the file will be overwritten.`);
    }
    return [];
  }
}

function parseLine(line: string, file: string, lineNumber: number): unknown {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    throw new UsageFileError(`${file}, line ${lineNumber}: not valid JSON (the file is truncated or corrupt).`);
  }
}

function parseRecord(value: unknown, file: string, lineNumber: number): UsageRecord {
  const where = `${file}, line ${lineNumber}`;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new UsageFileError(`${where}: a record must be a JSON object.`);
  const r = value as Record<string, unknown>;
  if (typeof r['at'] !== 'number' || !Number.isFinite(r['at'])) throw new UsageFileError(`${where}: "at" must be a time in milliseconds.`);
  if (typeof r['prompt'] !== 'string') throw new UsageFileError(`${where}: "prompt" must be a string.`);
  const names = (key: string): string[] => {
    const v = r[key] ?? [];
    if (!Array.isArray(v) || !v.every((n) => typeof n === 'string')) throw new UsageFileError(`${where}: "${key}" must be an array of tool names.`);
    return v as string[];
  };
  const source = r['source'];
  if (source !== undefined && source !== 'chat' && source !== 'agent') throw new UsageFileError(`${where}: "source" must be "chat" or "agent".`);
  let vector: Float32Array | undefined;
  if (r['vector'] !== undefined) {
    if (typeof r['vector'] !== 'string' || typeof r['modelId'] !== 'string') throw new UsageFileError(`${where}: "vector" must be base64 text with a "modelId".`);
    vector = decodeVector(r['vector'], where);
  }
  return {
    at: r['at'],
    prompt: r['prompt'],
    offered: names('offered'),
    called: names('called'),
    misses: names('misses'),
    ...(source ? { source: source as UsageSource } : {}),
    ...(vector ? { vector, modelId: r['modelId'] as string } : {}),
  };
}

/** float32 values as base64 of their bytes (little-endian, as on every platform VS Code runs on). */
function encodeVector(vector: Float32Array): string {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64');
}

function decodeVector(text: string, where: string): Float32Array {
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length === 0 || bytes.length % 4 !== 0 || bytes.length / 4 > MAX_VECTOR_DIMENSION || bytes.toString('base64') !== text) {
    throw new UsageFileError(`${where}: "vector" is not a base64 float32 vector.`);
  }
  const vector = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
  if (!vector.every(Number.isFinite)) throw new UsageFileError(`${where}: "vector" holds a value that is not a finite number.`);
  return vector;
}
