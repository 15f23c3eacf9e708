/**
 * Where tool pins (toolPins.ts) are kept: one JSON document behind a small seam, {@link ToolPinStore}.
 * The file store writes through a temporary file and a rename, readable by the user only; a file that is
 * not a pin file is kept aside as `.corrupt` and reported, never silently overwritten.
 */
import { mkdir, readFile, rename } from 'node:fs/promises';
import * as path from 'node:path';
import { writeFileAtomic } from '../util/atomicWrite';
import { isRecord } from '../util/isRecord';
import { describeError } from '../errors/describeError';

/**
 * The fields of a tool that are pinned: everything the model reads or the router acts on, and the MCP App
 * UI it points at (`_meta.ui`, or the older `_meta["ui/resourceUri"]`), which a client renders for the user.
 */
export const PINNED_FIELDS = ['title', 'description', 'inputSchema', 'outputSchema', 'annotations', 'ui'] as const;
export type PinnedField = (typeof PINNED_FIELDS)[number];
export type PinnedDefinition = { readonly [K in PinnedField]?: unknown };

export const TOOL_PINS_FILE_NAME = 'tool-pins.json';
export const TOOL_PINS_FORMAT = 'mcp-tool-router/tool-pins';
export const TOOL_PINS_VERSION = 1;
/** Suffix of a pin file that could not be read, kept for a look instead of being overwritten. */
export const CORRUPT_SUFFIX = '.corrupt';
/** Pin files are the user's own record of what they approved: nobody else reads or writes them. */
export const TOOL_PINS_FILE_MODE = 0o600;
/** A pin file larger than this is not ours (hundreds of servers of real tools stay far below it). */
const MAX_PIN_FILE_BYTES = 64 * 1024 * 1024;

export interface ToolPin {
  readonly fingerprint: string;
  /** The definition as recorded, for a diff; absent when longer than MAX_KEPT_DEFINITION_CHARS (toolPins.ts). */
  readonly definition?: PinnedDefinition;
  /** When it was recorded (first seen, or the change accepted): ISO 8601. */
  readonly recordedAt: string;
}

export interface ServerPinsDocument {
  /** The server's name when last seen: for a person reading the file (the key is a hash). */
  readonly name: string;
  readonly tools: Readonly<Record<string, ToolPin>>;
}

export interface ToolPinDocument {
  readonly format: typeof TOOL_PINS_FORMAT;
  readonly version: typeof TOOL_PINS_VERSION;
  readonly servers: Readonly<Record<string, ServerPinsDocument>>;
}

export class ToolPinFileError extends Error {
  /** @param setAside the unreadable file was moved beside itself, so writing a fresh one loses nothing. */
  constructor(message: string, readonly setAside: boolean) {
    super(message);
    this.name = 'ToolPinFileError';
  }
}

const FINGERPRINT = /^[0-9a-f]{64}$/;

/** Checks a parsed pin file; throws an Error naming the first thing that is wrong. */
export function parseToolPinDocument(value: unknown): ToolPinDocument {
  if (!isRecord(value) || value['format'] !== TOOL_PINS_FORMAT) throw new Error(`it is not a tool pin file (no "format": "${TOOL_PINS_FORMAT}")`);
  if (value['version'] !== TOOL_PINS_VERSION) throw new Error(`it has version ${JSON.stringify(value['version'])}, and this version of the router reads version ${TOOL_PINS_VERSION}`);
  const servers = value['servers'];
  if (!isRecord(servers)) throw new Error('"servers" is not an object');
  for (const [key, server] of Object.entries(servers)) {
    if (!isRecord(server) || typeof server['name'] !== 'string' || !isRecord(server['tools'])) throw new Error(`servers["${key}"] needs a "name" string and a "tools" object`);
    for (const [tool, pin] of Object.entries(server['tools'])) {
      const where = `servers["${key}"].tools["${tool}"]`;
      if (!isRecord(pin) || typeof pin['fingerprint'] !== 'string' || !FINGERPRINT.test(pin['fingerprint'])) throw new Error(`${where} needs a SHA-256 "fingerprint" (64 hex digits)`);
      if (typeof pin['recordedAt'] !== 'string') throw new Error(`${where} needs a "recordedAt" string`);
      if (pin['definition'] !== undefined && !isRecord(pin['definition'])) throw new Error(`${where}.definition is not an object`);
    }
  }
  return value as unknown as ToolPinDocument;
}

/**
 * Where pins are kept: one JSON document. `load` gives undefined when nothing was saved yet, and throws
 * a {@link ToolPinFileError} when something was saved but cannot be read.
 */
export interface ToolPinStore {
  /** For messages: a path, or a label such as `memory`. */
  readonly location: string;
  load(): Promise<ToolPinDocument | undefined>;
  save(document: ToolPinDocument): Promise<void>;
}

/**
 * Pins in one file (the extension's global storage, the CLI's cache folder), mode 0600, written whole
 * or not at all. A file that is not a pin file is renamed to `.corrupt` and reported.
 */
export class FileToolPinStore implements ToolPinStore {
  constructor(readonly file: string) {}

  get location(): string {
    return this.file;
  }

  async load(): Promise<ToolPinDocument | undefined> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new ToolPinFileError(`The tool pin file ${this.file} cannot be read (${describeError(error)}). Fix its permissions, or remove it to start the pins afresh.`, false);
    }
    let reason: string;
    try {
      if (Buffer.byteLength(text, 'utf8') > MAX_PIN_FILE_BYTES) throw new Error(`it is larger than ${MAX_PIN_FILE_BYTES} bytes`);
      return parseToolPinDocument(JSON.parse(text));
    } catch (error) {
      reason = error instanceof SyntaxError ? 'it is not valid JSON (truncated or corrupt)' : describeError(error);
    }
    const aside = `${this.file}${CORRUPT_SUFFIX}`;
    try {
      await rename(this.file, aside);
    } catch (error) {
      throw new ToolPinFileError(`The tool pin file ${this.file} cannot be used: ${reason}; moving it to ${aside} failed too (${describeError(error)}). Remove it to start the pins afresh.`, false);
    }
    throw new ToolPinFileError(`The tool pin file ${this.file} cannot be used: ${reason}. It was moved to ${aside} and the pins start afresh.`, true);
  }

  async save(document: ToolPinDocument): Promise<void> {
    const text = `${JSON.stringify(document, null, 1)}\n`;
    await mkdir(path.dirname(this.file), { recursive: true, mode: 0o700 });
    await writeFileAtomic(this.file, text, { mode: TOOL_PINS_FILE_MODE });
  }
}

/** Pins in memory, for tests and for hosts that keep nothing: saves a copy, as a file would. */
export class MemoryToolPinStore implements ToolPinStore {
  readonly location = 'memory';
  /** How many times `save` ran: tests check that a first sighting is saved. */
  saves = 0;
  private text: string | undefined;

  constructor(initial?: ToolPinDocument) {
    if (initial) this.text = JSON.stringify(initial);
  }

  get document(): ToolPinDocument | undefined {
    return this.text === undefined ? undefined : (JSON.parse(this.text) as ToolPinDocument);
  }

  load(): Promise<ToolPinDocument | undefined> {
    return Promise.resolve(this.document);
  }

  save(document: ToolPinDocument): Promise<void> {
    this.text = JSON.stringify(document);
    this.saves++;
    return Promise.resolve();
  }
}
