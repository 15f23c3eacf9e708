/**
 * Tool pinning: the first time a server lists a tool, what the model will read of it (title, description,
 * input and output schema, annotations) and the MCP App UI it points at are recorded with a SHA-256 fingerprint. When the server later
 * lists the tool with a different definition (a "rug pull": the tool the user approved changes under
 * them), the tool is held back until the user accepts the change. A new tool is recorded silently; a
 * removed one is simply gone. Any change counts, whitespace included: the model reads every character, and
 * a rule about which changes "matter" is a rule an attacker can write around.
 *
 * Pins are kept per server, and a server is its name plus what it launches (see {@link serverPinKey}),
 * in a {@link ToolPinStore} (toolPinStore.ts). Pure core.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../util/canonicalJson';
import type { ServerDefinition } from '../config/serverConfig';
import type { ServerTool } from '../connection/serverConnection';
import { PINNED_FIELDS, TOOL_PINS_FORMAT, TOOL_PINS_VERSION, ToolPinFileError, type PinnedDefinition, type PinnedField, type ToolPin, type ToolPinDocument, type ToolPinStore } from './toolPinStore';
import { describeError } from '../errors/describeError';

/**
 * A recorded definition longer than this (canonical JSON characters) keeps its fingerprint only. The
 * largest tool in the saved real catalogues (test/fixtures/catalogues) is about 15,000; four times that
 * leaves room for honest tools while a hostile server cannot grow the pin file without bound.
 */
export const MAX_KEPT_DEFINITION_CHARS = 65_536;


/** The `_meta` keys an MCP App's UI lives under. */
const UI_META_KEYS = ['ui', 'ui/resourceUri'] as const;

/** The pinned part of a tool as its server listed it (the server's own name and fields, not the router's). */
export function pinnedDefinition(tool: ServerTool): PinnedDefinition {
  const out: Partial<Record<PinnedField, unknown>> = {};
  for (const field of PINNED_FIELDS) if (field !== 'ui' && tool[field] !== undefined) out[field] = tool[field];
  const ui = Object.fromEntries(UI_META_KEYS.filter((key) => tool._meta?.[key] !== undefined).map((key) => [key, tool._meta![key]]));
  if (Object.keys(ui).length > 0) out.ui = ui;
  return out;
}


function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** SHA-256 (hex) of the definition's canonical JSON. */
export function definitionFingerprint(definition: PinnedDefinition): string {
  return sha256(canonicalJson(definition));
}

/** The fields whose canonical JSON differs between two definitions. */
export function changedFields(before: PinnedDefinition, after: PinnedDefinition): PinnedField[] {
  return PINNED_FIELDS.filter((f) => canonicalJson(before[f] ?? null) !== canonicalJson(after[f] ?? null));
}

/** Words for the changed fields in messages: "description and input schema". */
export function describeFields(fields: readonly PinnedField[]): string {
  const words: Record<PinnedField, string> = { title: 'title', description: 'description', inputSchema: 'input schema', outputSchema: 'output schema', annotations: 'annotations', ui: 'app UI' };
  const list = fields.map((f) => words[f]);
  if (list.length === 0) return 'definition';
  return list.length === 1 ? list[0]! : `${list.slice(0, -1).join(', ')} and ${list[list.length - 1]}`;
}

/**
 * Who a server is for pinning: its name and what it launches (command, args and cwd of a local server;
 * the URL of a remote one), hashed. A name alone would let two workspaces that each call a different
 * program "files" share pins, so one's tools would hold the other's back or pass as approved. The env
 * and headers are left out: they hold tokens that rotate, and a rotated token is not a different server.
 * Changing the launch (a new version in args, another URL) is a deliberate edit by the user and starts
 * the pins afresh; a server that changes behind an unchanged launch (`pkg@latest`) is what pins catch.
 */
export function serverPinKey(def: Pick<ServerDefinition, 'name' | 'launch'>): string {
  const launch = def.launch.type === 'stdio' ? { kind: 'stdio', command: def.launch.command, args: def.launch.args, cwd: def.launch.cwd ?? null } : { kind: 'remote', url: def.launch.url };
  return sha256(canonicalJson({ name: def.name, launch }));
}

/** A server as pins know it: its key for storage, its name for messages and for accept-all by name. */
export interface PinnedServer {
  readonly name: string;
  readonly key: string;
}

export function pinnedServer(def: Pick<ServerDefinition, 'name' | 'launch'>): PinnedServer {
  return { name: def.name, key: serverPinKey(def) };
}

// ---------------------------------------------------------------------------------------------------
// Checking tools against their pins

/** A tool listed with a definition other than its pin: what was approved, what is listed now. */
export interface ToolChange {
  /** The recorded definition; absent when it was too long to keep (only its fingerprint was). */
  readonly pinned?: PinnedDefinition;
  readonly pinnedFingerprint: string;
  readonly current: PinnedDefinition;
  readonly fingerprint: string;
  /** The fields that differ; every field the tool has when the recorded definition was not kept. */
  readonly changed: readonly PinnedField[];
}

export type PinVerdict =
  /** Not seen before on this server: recorded now, and allowed. */
  | { readonly status: 'first-seen' }
  /** Listed as recorded. */
  | { readonly status: 'pinned' }
  /** Changed since recorded: hold it back until the user accepts. */
  | { readonly status: 'changed'; readonly change: ToolChange }
  /** Changed, and accepted at once because the host was told to accept this server's changes. */
  | { readonly status: 'accepted'; readonly change: ToolChange }
  /** Cannot be fingerprinted at all (an in-process definition with a cycle): hold it back for good. */
  | { readonly status: 'unverifiable'; readonly reason: string };

export interface ToolPinsOptions {
  /** Told when the pin file cannot be read or written: the host shows it loudly (log and notification). */
  readonly onProblem?: (message: string) => void;
  /**
   * Server names whose changed tools are accepted (and recorded) as they are seen, for this router's
   * life: the CLI's `--accept-tool-changes SERVER`.
   */
  readonly acceptChangesFrom?: readonly string[];
  /** How the user accepts a change of `server` in this host, for the message of a held-back call. */
  readonly howToAccept?: (server: string) => string;
  /** The clock for `recordedAt` (epoch ms); tests pass their own. */
  readonly now?: () => number;
}

/** The default hint names both hosts; each host passes its own. */
export function defaultHowToAccept(server: string): string {
  return `To review and accept the change, run "Tool Router: Review Changed Tools" in VS Code, or pass --accept-tool-changes ${server} to the mcp-tool-router CLI.`;
}

interface ServerPins {
  name: string;
  /** A Map, not an object: a tool may be called "constructor" or "__proto__". */
  readonly tools: Map<string, ToolPin>;
}

/**
 * The pins of every server, loaded once from a {@link ToolPinStore}; checks are synchronous (the router
 * checks while it builds its catalogue) and every new record is saved in the background, in order.
 */
export class ToolPins {
  private readonly servers = new Map<string, ServerPins>();
  private readonly acceptFrom: ReadonlySet<string>;
  private loading: Promise<void> | undefined;
  private loaded = false;
  /** Off after a file that could not be read: writing would replace the user's record with a fresh one. */
  private persist = true;
  private dirty = false;
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly store: ToolPinStore, private readonly options: ToolPinsOptions = {}) {
    this.acceptFrom = new Set(options.acceptChangesFrom ?? []);
  }

  /** Whether the pins have been read (or found unreadable): `check` may run. */
  get isLoaded(): boolean {
    return this.loaded;
  }

  get location(): string {
    return this.store.location;
  }

  howToAccept(server: string): string {
    return (this.options.howToAccept ?? defaultHowToAccept)(server);
  }

  /**
   * Loads the pins once. A file that cannot be read is reported and the pins start empty, so every tool
   * is recorded afresh as first seen: an unreadable record cannot tell changed from unchanged, and holding
   * every tool back would lock the user out until they reset the file, which is the same fresh start.
   * A corrupt file is kept aside (`.corrupt`); one that cannot even be read is never overwritten.
   */
  whenLoaded(): Promise<void> {
    this.loading ??= this.load();
    return this.loading;
  }

  /** Checks one listed tool against its pin, recording it when first seen (or accepted by option). */
  check(server: PinnedServer, tool: string, definition: PinnedDefinition): PinVerdict {
    if (!this.loaded) throw new Error('ToolPins.check was called before whenLoaded() resolved.');
    let fingerprint: string;
    let text: string;
    try {
      text = canonicalJson(definition);
      fingerprint = sha256(text);
    } catch (error) {
      return { status: 'unverifiable', reason: describeError(error) };
    }
    const pins = this.serverPins(server);
    const pin = pins.tools.get(tool);
    if (!pin) {
      this.record(pins, tool, fingerprint, text);
      return { status: 'first-seen' };
    }
    if (pin.fingerprint === fingerprint) return { status: 'pinned' };
    const change: ToolChange = {
      ...(pin.definition ? { pinned: pin.definition } : {}),
      pinnedFingerprint: pin.fingerprint,
      current: definition,
      fingerprint,
      changed: pin.definition ? changedFields(pin.definition, definition) : PINNED_FIELDS.filter((f) => definition[f] !== undefined),
    };
    if (this.acceptFrom.has(server.name)) {
      this.record(pins, tool, fingerprint, text);
      return { status: 'accepted', change };
    }
    return { status: 'changed', change };
  }

  /**
   * Records `definition` as the approved one for `tool`. Resolves once saved; a failed save is reported
   * through `onProblem`, not thrown, since the pin still holds for this session.
   */
  accept(server: PinnedServer, tool: string, definition: PinnedDefinition): Promise<void> {
    if (!this.loaded) throw new Error('ToolPins.accept was called before whenLoaded() resolved.');
    const text = canonicalJson(definition);
    this.record(this.serverPins(server), tool, sha256(text), text);
    return this.writing;
  }

  /** The recorded pin of one tool, if any. */
  pinOf(server: PinnedServer, tool: string): ToolPin | undefined {
    return this.servers.get(server.key)?.tools.get(tool);
  }

  /** Resolves when every record made so far has been saved (or has failed to save and been reported). */
  flush(): Promise<void> {
    return this.writing;
  }

  private serverPins(server: PinnedServer): ServerPins {
    let pins = this.servers.get(server.key);
    if (!pins) {
      pins = { name: server.name, tools: new Map() };
      this.servers.set(server.key, pins);
    }
    pins.name = server.name;
    return pins;
  }

  /** `text` is the definition's canonical JSON: the kept copy is parsed from it, so it shares nothing with the server's objects. */
  private record(pins: ServerPins, tool: string, fingerprint: string, text: string): void {
    pins.tools.set(tool, {
      fingerprint,
      ...(text.length <= MAX_KEPT_DEFINITION_CHARS ? { definition: JSON.parse(text) as PinnedDefinition } : {}),
      recordedAt: new Date(this.options.now?.() ?? Date.now()).toISOString(),
    });
    this.scheduleSave();
  }

  /** Saves run one after another; records made while one runs are saved by the next, together. */
  private scheduleSave(): void {
    if (!this.persist) return;
    this.dirty = true;
    this.writing = this.writing.then(async () => {
      if (!this.dirty) return;
      this.dirty = false;
      try {
        await this.mergeSaved();
        await this.store.save(this.toDocument());
      } catch (error) {
        this.report(`The tool pins could not be saved to ${this.store.location} (${describeError(error)}). They hold for this session; tools first seen now will be recorded again as new next time.`);
      }
    });
  }

  /**
   * Other VS Code windows (or CLI runs) share the pin file and may have recorded pins since this one
   * loaded: before writing, the saved pins are taken in, the later record of a tool winning (so a change
   * accepted elsewhere holds here too), so that one writer never erases another's records.
   */
  private async mergeSaved(): Promise<void> {
    let saved: ToolPinDocument | undefined;
    try {
      saved = await this.store.load();
    } catch (error) {
      // Unreadable now (moved aside if corrupt): what this session holds is written in its place.
      this.report(describeError(error));
      return;
    }
    for (const [key, server] of Object.entries(saved?.servers ?? {})) {
      const pins = this.servers.get(key) ?? { name: server.name, tools: new Map<string, ToolPin>() };
      this.servers.set(key, pins);
      for (const [tool, pin] of Object.entries(server.tools)) {
        const ours = pins.tools.get(tool);
        if (!ours || pin.recordedAt > ours.recordedAt) pins.tools.set(tool, pin);
      }
    }
  }

  private toDocument(): ToolPinDocument {
    const servers = [...this.servers].filter(([, s]) => s.tools.size > 0).map(([key, s]) => [key, { name: s.name, tools: Object.fromEntries(s.tools) }] as const);
    return { format: TOOL_PINS_FORMAT, version: TOOL_PINS_VERSION, servers: Object.fromEntries(servers) };
  }

  private async load(): Promise<void> {
    try {
      const document = await this.store.load();
      for (const [key, server] of Object.entries(document?.servers ?? {})) {
        this.servers.set(key, { name: server.name, tools: new Map(Object.entries(server.tools)) });
      }
    } catch (error) {
      this.servers.clear();
      this.persist = error instanceof ToolPinFileError && error.setAside;
      const message = error instanceof ToolPinFileError ? error.message : `The tool pins could not be loaded from ${this.store.location} (${describeError(error)}).`;
      this.report(`${message} Every tool is recorded afresh as first seen${this.persist ? '' : ', in memory only: nothing is saved this session, so the unreadable file is left as it is'}; a tool that changed before this start is not caught.`);
    }
    this.loaded = true;
  }

  private report(message: string): void {
    try {
      this.options.onProblem?.(message);
    } catch {
      // The host's reporting failed; the pins go on either way.
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// Holding tools back (the router's side)

/** A tool its server lists, kept out of the catalogue and out of calls until the user accepts it. */
export interface HeldBackTool {
  /** The exposed name it has when it comes back. */
  readonly name: string;
  readonly server: string;
  readonly originalName: string;
  /** Why, as the end of a sentence that starts with the server: `changed the description of tool "x" since …`. */
  readonly reason: string;
  /** What was approved and what is listed now; absent when the definition cannot be pinned (nor accepted). */
  readonly change?: ToolChange;
}

/**
 * Checks one listed tool (exposed as `name`) against its pin: the tool held back, or undefined when it
 * may be offered. A change accepted by option is told to `log`.
 */
export function holdBackIfChanged(pins: ToolPins, server: PinnedServer, tool: ServerTool, name: string, log: (line: string) => void): HeldBackTool | undefined {
  const verdict = pins.check(server, tool.name, pinnedDefinition(tool));
  switch (verdict.status) {
    case 'first-seen':
    case 'pinned':
      return undefined;
    case 'accepted':
      log(`Tool "${tool.name}" changed its ${describeFields(verdict.change.changed)} since it was pinned; the change was accepted and recorded, as asked for this server.`);
      return undefined;
    case 'changed':
      return {
        name,
        server: server.name,
        originalName: tool.name,
        reason: `changed the ${describeFields(verdict.change.changed)} of tool "${tool.name}" since it was approved, and a changed tool is neither offered nor called until the change is accepted`,
        change: verdict.change,
      };
    case 'unverifiable':
      return { name, server: server.name, originalName: tool.name, reason: `lists tool "${tool.name}" with a definition that cannot be pinned (${verdict.reason})` };
  }
}

/** What a call of a held-back tool answers: what changed, and how to accept it in this host. */
export function heldBackMessage(held: HeldBackTool, pins: ToolPins): string {
  const next = held.change ? pins.howToAccept(held.server) : "It stays held back; ask the server's author to fix the definition.";
  return `"${held.name}" is held back: server "${held.server}" ${held.reason}. ${next}`;
}

/** Servers whose held-back tools (names or the change held) differ between two catalogue builds. */
export function changedHeldServers(before: ReadonlyMap<string, HeldBackTool>, after: ReadonlyMap<string, HeldBackTool>): Set<string> {
  const servers = new Set<string>();
  for (const [name, held] of before) {
    const now = after.get(name);
    if (!now || now.server !== held.server || now.reason !== held.reason || now.change?.fingerprint !== held.change?.fingerprint) servers.add(held.server);
  }
  for (const [name, held] of after) if (!before.has(name)) servers.add(held.server);
  return servers;
}
