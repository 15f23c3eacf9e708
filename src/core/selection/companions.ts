/**
 * Companion tools: the tool that finds the item another tool acts on.
 *
 * People name things by what they are called, not by their ids: "Tom Becker changed his phone number,
 * update his record" needs `applicantsUpdate`, and before it the tool that lists or searches applicants to
 * find Tom's id. The request never says "list", so that lister ranks far down.
 *
 * So, for each of the few best tools sent, the same server's lister of the same resource is sent too,
 * unless the prompt already gives that resource's id ("applicant 88213"). Everything is read from the
 * catalogue itself: a tool is a lister when its name has a listing word (list, search, find, query, all…);
 * a resource is a word of the tool's name that few of its server's tools share (`rooms` in
 * `post_room_message` and `list_rooms`, but not `projects` in every `projects_locations_…` of a server).
 * A required parameter names a resource too, the container the tool acts in: `calendarId` of
 * `events_insert` is found by `calendarList_list`. Pure: no I/O, no vscode.
 */
import { identifierWords } from '../embedding/textPreprocess';
import { isRecord } from '../util/isRecord';
import { stem } from './lexicalTerms';

/** Words in a tool's name that make it a lister: it returns many items, whose ids other tools take. */
const LISTING_WORDS: ReadonlySet<string> = new Set(['list', 'lists', 'listing', 'search', 'find', 'query', 'all', 'browse', 'lookup', 'index', 'enumerate']);

/** Words in a tool's name that say it makes a new item, whose id nobody has yet. */
const CREATING_WORDS: ReadonlySet<string> = new Set(['create', 'add', 'new', 'insert', 'make', 'upload', 'import', 'register']);

/**
 * A name word shared by more than this share of its server's tools is a path prefix every tool carries
 * (`projects_locations_…`, `api`), not a resource one tool acts on, so it matches no lister. High on
 * purpose: a chat server's `room` is in three quarters of its tools and is still the thing to find first.
 */
export const RESOURCE_MAX_SHARE = 0.9;

/**
 * A server with more tools than this is a bundle of many APIs under one name (an aggregating gateway, or a
 * flat benchmark catalogue), not one API with one set of resources: there a `user` in one tool's name and a
 * lister's says nothing about the two working together, so its tools get no companions. Real MCP servers
 * stay far below it; big ones list one or two hundred.
 */
export const COMPANION_MAX_SERVER_TOOLS = 300;

/** Name words too short to name a resource (`v1`, `id`, `by`). */
const MIN_RESOURCE_LENGTH = 3;

/** Last words of a parameter's name that say it holds a reference, not what it refers to (`calendarId`). */
const REFERENCE_WORDS: ReadonlySet<string> = new Set(['id', 'ids', 'key', 'name', 'uuid']);

export interface CompanionTool {
  readonly name: string;
  readonly server: string;
  /** The tool's JSON Schema: its required parameters name the containers it acts in. */
  readonly inputSchema?: unknown;
}

/** A lister sent for a chosen tool, with the resource that links them. */
export interface Companion {
  readonly index: number;
  readonly forIndex: number;
  readonly resource: string;
}

/** The catalogue's listers and resources, built once per catalogue. */
export class CompanionIndex {
  /** Each tool's resource words (stemmed), in catalogue order. */
  private readonly resources: ReadonlyArray<ReadonlySet<string>>;
  /** The resources each tool's required parameters name (stemmed): the containers it acts in. */
  private readonly containers: ReadonlyArray<ReadonlySet<string>>;
  /** A resource's word as the catalogue first wrote it, for reasons (`directory`, not the stem `directori`). */
  private readonly surface = new Map<string, string>();
  /** Whether each tool's name says it makes a new item (create, add…): the item has no id to find yet. */
  private readonly creates: readonly boolean[];
  private readonly isLister: readonly boolean[];
  /** Each server's listers, by catalogue position; none for servers above COMPANION_MAX_SERVER_TOOLS. */
  private readonly listersByServer = new Map<string, number[]>();

  constructor(private readonly tools: readonly CompanionTool[]) {
    const words = tools.map((t) => nameWords(t.name, t.server));
    // A lister's words after "by" filter what it lists (`blogs_listByUser` lists blogs).
    const listed = words.map((w) => (w.some((x) => LISTING_WORDS.has(x)) && w.includes('by') ? w.slice(0, w.indexOf('by')) : w));
    const stems = words.map((w) => w.map(stem));
    this.isLister = words.map((w) => w.some((x) => LISTING_WORDS.has(x)));
    this.creates = words.map((w) => w.some((x) => CREATING_WORDS.has(x)));
    // How many of each server's tools carry each word, to tell resources from shared prefixes.
    const counts = new Map<string, Map<string, number>>();
    const sizes = new Map<string, number>();
    tools.forEach((t, i) => {
      sizes.set(t.server, (sizes.get(t.server) ?? 0) + 1);
      const c = counts.get(t.server) ?? new Map<string, number>();
      counts.set(t.server, c);
      for (const w of new Set(stems[i])) c.set(w, (c.get(w) ?? 0) + 1);
      if (this.isLister[i]) {
        const list = this.listersByServer.get(t.server) ?? [];
        this.listersByServer.set(t.server, list);
        list.push(i);
      }
    });
    // A bundle of many APIs gets no companions: without its listers, none of its tools finds one.
    for (const [server, size] of sizes) if (size > COMPANION_MAX_SERVER_TOOLS) this.listersByServer.delete(server);
    this.resources = tools.map((t, i) => {
      const size = sizes.get(t.server)!;
      const c = counts.get(t.server)!;
      const out = new Set<string>();
      listed[i]!.forEach((w, k) => {
        const s = stems[i]![k]!;
        if (s.length < MIN_RESOURCE_LENGTH || LISTING_WORDS.has(w) || CREATING_WORDS.has(w) || /^\d/.test(s)) return;
        if (size > 2 && c.get(s)! / size > RESOURCE_MAX_SHARE) return;
        out.add(s);
        if (!this.surface.has(s)) this.surface.set(s, singular(w));
      });
      return out;
    });
    this.containers = tools.map((t) => new Set(requiredParameterWords(t.inputSchema).map(stem).filter((s) => s.length >= MIN_RESOURCE_LENGTH && !LISTING_WORDS.has(s))));
  }

  /**
   * For each chosen tool (best first), the listers of its server whose resources are all among the tool's
   * own: `list_rooms` and `list_room_messages` for `update_room_message`, the container first. A chosen
   * lister, and a tool that makes a new item, bring only listers of its containers (`list_rooms` for
   * `list_room_messages` and for `create_room_task`; nothing for `create_directory`). A resource whose
   * id the prompt gives needs no lister. At most COMPANIONS_PER_TOOL per chosen tool, none repeated.
   */
  companionsFor(chosen: readonly number[], scores: ArrayLike<number>, prompt: string): Companion[] {
    const out: Companion[] = [];
    const taken = new Set(chosen);
    const identified = resourcesWithIds(prompt);
    for (const i of chosen) {
      if (this.resources[i]!.size === 0 && this.containers[i]!.size === 0) continue;
      const candidates: Array<{ index: number; size: number; resource: string }> = [];
      for (const j of this.listersByServer.get(this.tools[i]!.server) ?? []) {
        const theirs = this.resources[j]!;
        if (j === i || theirs.size === 0 || [...theirs].some((r) => identified.has(r)) || !this.finds(j, i)) continue;
        candidates.push({ index: j, size: theirs.size, resource: [...theirs].map((r) => this.surface.get(r) ?? r).join(' ') });
      }
      candidates.sort((a, b) => a.size - b.size || scores[b.index]! - scores[a.index]!);
      let added = 0;
      for (const c of candidates) {
        if (added >= COMPANIONS_PER_TOOL) break;
        added++;
        if (taken.has(c.index)) continue;
        taken.add(c.index);
        out.push({ index: c.index, forIndex: i, resource: c.resource });
      }
    }
    return out;
  }

  /**
   * Whether lister `j` finds what tool `i` acts on: a container its required parameters name, or by name
   * its item or a container of it. A lister, or a tool that makes a new item, needs only containers.
   */
  private finds(j: number, i: number): boolean {
    const theirs = [...this.resources[j]!];
    const named = this.resources[i]!;
    const containers = this.containers[i]!;
    if (theirs.every((r) => containers.has(r))) return true;
    if ((this.isLister[i] || this.creates[i]) && theirs.length >= named.size) return false;
    return theirs.every((r) => named.has(r) || containers.has(r));
  }
}

/** Listers sent per chosen tool: the container's and the item's own (`list_rooms`, `list_room_messages`). */
export const COMPANIONS_PER_TOOL = 2;

/**
 * The last word of each required parameter's name, past a reference word: `calendarId` → calendar,
 * `tasklist` → tasklist, `channel_name` → channel. Optional parameters name no container the tool needs.
 */
function requiredParameterWords(schema: unknown): string[] {
  if (!isRecord(schema) || !Array.isArray(schema['required'])) return [];
  const out: string[] = [];
  for (const parameter of schema['required']) {
    if (typeof parameter !== 'string') continue;
    const words = identifierWords(parameter);
    while (words.length > 1 && REFERENCE_WORDS.has(words[words.length - 1]!)) words.pop();
    const last = words[words.length - 1];
    if (last && !REFERENCE_WORDS.has(last)) out.push(last);
  }
  return out;
}

/** `rooms` → room, `directories` → directory, for reasons; other words as they are. */
function singular(word: string): string {
  if (word.endsWith('ies') && word.length > 4) return `${word.slice(0, -3)}y`;
  if (word.endsWith('s') && !/(?:ss|us|is)$/.test(word) && word.length > 3) return word.slice(0, -1);
  return word;
}

/** A tool name's words, lowercased, without the server's own name words (the exposed name's prefix). */
function nameWords(name: string, server: string): string[] {
  const serverWords = new Set(identifierWords(server));
  const bare = name.startsWith(`${server}_`) ? name.slice(server.length + 1) : name;
  return identifierWords(bare).filter((w) => !serverWords.has(w));
}

/**
 * The resources the prompt gives an id for (stemmed): a word followed by a number or a `#`-reference
 * ("applicant 88213", "job #12", "rooms 4471 and 4472"), or by "id …" or "no. 12". No lister is needed
 * for them. Read once per prompt.
 */
export function resourcesWithIds(prompt: string): Set<string> {
  const out = new Set<string>();
  const words = prompt.toLowerCase().match(/[\p{L}\p{N}#]+/gu) ?? [];
  for (let k = 0; k + 1 < words.length; k++) {
    const next = words[k + 1]!;
    if (/^#?\d/.test(next) || (next === 'id' && k + 2 < words.length) || (next === 'no' && /^\d/.test(words[k + 2] ?? ''))) out.add(stem(words[k]!));
  }
  return out;
}

/** Whether the prompt gives an id for one resource (see resourcesWithIds). */
export function givesIdFor(prompt: string, resource: string): boolean {
  return resourcesWithIds(prompt).has(resource);
}
