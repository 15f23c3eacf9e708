import { PromptSchema, ResourceSchema, ResourceTemplateSchema } from '@modelcontextprotocol/core';
import { ProtocolErrorCode, UriTemplate, type Prompt, type Resource, type ResourceTemplateType as ResourceTemplate } from '@modelcontextprotocol/server';
import { ConnectionError } from '../connection/connectionErrors';
import type { Connection } from '../connection/serverConnection';
import type { ForwardedMethod } from '../connection/serverNotices';
import { describeError } from '../errors/describeError';
import type { RoutedTool } from '../router/toolRouter';
import { assignToolNames, withIdentitySuffix } from '../router/naming';
import { isRecord } from '../util/isRecord';
import { decodeCursor, encodeCursor, type ListPosition } from './gatewayCursor';

/**
 * Where each resource, template and prompt the gateway offers comes from, shared by every session.
 *
 * Resource identity: a resource keeps its URI exactly as its server gives it, because URIs are addresses
 * that clients show, store and follow (an MCP App's `ui://` page is named in its tool's `_meta`). A read or
 * subscribe is routed by the URI to the server that listed it, else to the server of the tool whose UI it
 * is, else to the first server with a template that matches it. When two servers list one URI, the first
 * in configuration order keeps it, the other's entry is left out of the list, and a warning is logged.
 * Titles show the server (`[server] title`) so equal names stay distinguishable.
 *
 * Prompts are named like tools, `{server}_{prompt}` (naming.ts), and mapped back on get and completion.
 * Only servers that are ready and declare the feature are offered: a disabled, failed or restarting
 * server offers nothing.
 */

/** What the directory needs of the router; ToolRouter fits. */
export interface RoutedServers {
  /** In configuration order: the order lists walk and collisions are settled in. */
  listConnections(): Connection[];
  serverPrefixes(): ReadonlyMap<string, string>;
  listTools(): RoutedTool[];
}

export type ListKind = 'resources' | 'resourceTemplates' | 'prompts';
type Entry<K extends ListKind> = K extends 'resources' ? Resource : K extends 'resourceTemplates' ? ResourceTemplate : Prompt;

const LISTS = {
  resources: { method: 'resources/list', capability: 'resources', schema: ResourceSchema },
  resourceTemplates: { method: 'resources/templates/list', capability: 'resources', schema: ResourceTemplateSchema },
  prompts: { method: 'prompts/list', capability: 'prompts', schema: PromptSchema },
} as const satisfies Record<ListKind, { method: ForwardedMethod; capability: 'resources' | 'prompts'; schema: unknown }>;

/**
 * The 2025 spec's code for an unknown resource. SDK 2.x sends it as -32602 (Invalid Params, with the URI in
 * `data`) on every revision, as the 2026-07-28 spec asks; clients accept both.
 */
export const RESOURCE_NOT_FOUND = ProtocolErrorCode.ResourceNotFound;
/** Server pages one gateway page may skip when they are empty, so a server handing out empty pages cannot hold an answer. */
export const MAX_EMPTY_PAGES = 20;
/** Pages read when a whole list is needed to route (templates, an unlisted URI); as for tools, no real server has more. */
export const MAX_ROUTING_PAGES = 100;

/**
 * An error for the gateway's client: code and message as they should reach it (the SDK adds no prefix), and
 * `data` when the spec puts something there (the URI of a resource not found).
 */
export function gatewayError(code: number, message: string, data?: Record<string, unknown>): Error {
  return Object.assign(new Error(message), { code }, data ? { data } : {});
}

/** JSON-RPC's code for a request that timed out, as MCP uses it; SDK 2.x reports its own timeouts as SdkError instead. */
const REQUEST_TIMEOUT = -32001;

/**
 * A server's failure as the client should see it: the server's own error code kept, and the server named.
 * A server's error is recognised by its numeric code, not its class: the client and server packages each
 * carry their own copy of ProtocolError.
 */
export function forwardedError(server: string, error: unknown): Error {
  if (error instanceof ConnectionError) return gatewayError(error.type === 'TIMEOUT' ? REQUEST_TIMEOUT : ProtocolErrorCode.InternalError, error.message);
  if (isRecord(error) && Number.isSafeInteger(error['code']) && typeof error['message'] === 'string') {
    return gatewayError(error['code'] as number, `Server "${server}": ${error['message']}`, isRecord(error['data']) ? error['data'] : undefined);
  }
  return gatewayError(ProtocolErrorCode.InternalError, `Server "${server}" failed: ${describeError(error)}`);
}

export interface Page<T> {
  readonly items: T[];
  readonly nextCursor?: string;
}

export class FeatureDirectory {
  private readonly resourceOwners = new Map<string, string>();
  private readonly templateOwners = new Map<string, string>();
  private readonly prompts = new Map<string, { readonly server: string; readonly name: string }>();
  /** Each server's whole template list, read when a URI must be matched; dropped when its resources change. */
  private readonly templates = new Map<string, Promise<ResourceTemplate[]>>();
  private readonly warned = new Set<string>();

  constructor(
    private readonly servers: RoutedServers,
    private readonly log: (message: string) => void,
  ) {}

  /** Ready servers that declare `capability`, in configuration order. */
  offering(capability: 'resources' | 'prompts' | 'completions' | 'logging'): Connection[] {
    return this.servers.listConnections().filter((c) => c.currentState === 'ready' && c.serverCapabilities?.[capability] !== undefined);
  }

  /** A server's lists changed or it restarted: what was read of its templates is stale. */
  forget(server: string): void {
    this.templates.delete(server);
  }

  /** One page of the aggregate list: the next non-empty server page from the cursor's position on. */
  async listPage<K extends ListKind>(kind: K, cursor: string | undefined, signal?: AbortSignal): Promise<Page<Entry<K>>> {
    let position = cursor === undefined ? this.firstFrom(kind, 0) : this.resume(kind, cursor);
    for (let skipped = 0; position && skipped <= MAX_EMPTY_PAGES; skipped++) {
      const connection = this.servers.listConnections().find((c) => c.name === position!.server);
      const page = connection ? await this.serverPage(connection, kind, position.cursor, signal) : { items: [] };
      const next: ListPosition | undefined = page.nextCursor !== undefined ? { server: position.server, cursor: page.nextCursor } : this.after(kind, position.server);
      const items = this.adopt(kind, position.server, page.items);
      if (items.length > 0 || !next) return { items, ...(next ? { nextCursor: encodeCursor(next) } : {}) };
      position = next;
    }
    return { items: [], ...(position ? { nextCursor: encodeCursor(position) } : {}) };
  }

  /** The server a resource URI belongs to (see the identity rule above). */
  async resourceOwner(uri: string, signal?: AbortSignal): Promise<Connection> {
    const offering = this.offering('resources');
    const byName = (server: string | undefined): Connection | undefined => offering.find((c) => c.name === server);
    const listed = byName(this.resourceOwners.get(uri));
    if (listed) return listed;
    // An MCP App's page, read straight from its tool's _meta: the first server (in configuration order) with such a tool.
    const apps = new Set(this.servers.listTools().filter((t) => uiResourceUri(t) === uri).map((t) => t.server));
    const app = offering.find((c) => apps.has(c.name));
    if (app) return app;
    const templated = await this.templateOwner((t) => matchesTemplate(t.uriTemplate, uri), signal);
    if (templated) return templated;
    // Not seen yet (a client that reads without listing): read the lists, first server first.
    for (const connection of offering) {
      await this.readWholeList(connection, 'resources', signal);
      const found = byName(this.resourceOwners.get(uri));
      if (found) return found;
    }
    throw gatewayError(RESOURCE_NOT_FOUND, `No server behind the router offers the resource "${uri}": list the resources and templates (resources/list, resources/templates/list) to see what is offered.`, { uri });
  }

  /** The server whose template is exactly `uriTemplate` (a completion's ref), else the owner of it as a URI. */
  async templateOrResourceOwner(uriTemplate: string, signal?: AbortSignal): Promise<Connection> {
    return (await this.templateOwner((t) => t.uriTemplate === uriTemplate, signal)) ?? this.resourceOwner(uriTemplate, signal);
  }

  /** The server and its own name for an exposed prompt name. */
  async prompt(exposed: string, signal?: AbortSignal): Promise<{ readonly connection: Connection; readonly name: string }> {
    const offering = this.offering('prompts');
    const known = (): { connection: Connection; name: string } | undefined => {
      const entry = this.prompts.get(exposed);
      const connection = entry && offering.find((c) => c.name === entry.server);
      return connection && entry ? { connection, name: entry.name } : undefined;
    };
    const hit = known();
    if (hit) return hit;
    // Not listed yet: the servers whose prefix starts the name list theirs now.
    const prefixes = this.servers.serverPrefixes();
    for (const connection of offering.filter((c) => exposed.startsWith(`${prefixes.get(c.name) ?? c.name}_`))) {
      await this.readWholeList(connection, 'prompts', signal);
      const found = known();
      if (found) return found;
    }
    throw gatewayError(ProtocolErrorCode.InvalidParams, `There is no prompt named "${exposed}": list the prompts (prompts/list) to see their names.`);
  }

  private async templateOwner(test: (t: ResourceTemplate) => boolean, signal?: AbortSignal): Promise<Connection | undefined> {
    for (const connection of this.offering('resources')) {
      let templates = this.templates.get(connection.name);
      if (!templates) {
        templates = this.readWholeList(connection, 'resourceTemplates', signal);
        this.templates.set(connection.name, templates);
        templates.catch(() => this.templates.delete(connection.name));
      }
      if ((await templates.catch(() => [])).some(test)) return connection;
    }
    return undefined;
  }

  /** Every page of one server's list, adopted into the directory (bounded by {@link MAX_ROUTING_PAGES}). */
  private async readWholeList<K extends ListKind>(connection: Connection, kind: K, signal?: AbortSignal): Promise<Entry<K>[]> {
    const out: Entry<K>[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_ROUTING_PAGES; page++) {
      const result = await this.serverPage(connection, kind, cursor, signal);
      this.adopt(kind, connection.name, result.items);
      out.push(...result.items);
      if (result.nextCursor === undefined || result.nextCursor === cursor) break;
      cursor = result.nextCursor;
    }
    return out;
  }

  /** One page of one server's list, each entry checked; a server that fails is skipped with a warning. */
  private async serverPage<K extends ListKind>(connection: Connection, kind: K, cursor: string | undefined, signal?: AbortSignal): Promise<{ items: Entry<K>[]; nextCursor?: string }> {
    const list = LISTS[kind];
    let result: Record<string, unknown>;
    try {
      result = await connection.request(list.method, cursor !== undefined ? { cursor } : {}, { timeoutMs: connection.definition.options.callTimeoutMs, ...(signal ? { signal } : {}) });
    } catch (error) {
      if (signal?.aborted) throw error;
      this.log(`server "${connection.name}" did not answer ${list.method}, so its ${kind} are left out: ${describeError(error)}`);
      return { items: [] };
    }
    const raw = Array.isArray(result[kind]) ? (result[kind] as unknown[]) : [];
    const items: Entry<K>[] = [];
    for (const entry of raw) {
      if (list.schema.safeParse(entry).success) items.push(entry as Entry<K>);
      else this.log(`server "${connection.name}" listed an invalid entry in ${list.method}, left out: ${JSON.stringify(entry)?.slice(0, 120)}`);
    }
    const next = result['nextCursor'];
    return { items, ...(typeof next === 'string' && next.length > 0 ? { nextCursor: next } : {}) };
  }

  private adopt<K extends ListKind>(kind: K, server: string, items: Entry<K>[]): Entry<K>[] {
    if (kind === 'prompts') return this.namePrompts(server, items as Prompt[]) as Entry<K>[];
    const owners = kind === 'resources' ? this.resourceOwners : this.templateOwners;
    const key = (item: Entry<K>): string => (kind === 'resources' ? (item as Resource).uri : (item as ResourceTemplate).uriTemplate);
    const out: Entry<K>[] = [];
    for (const item of items) {
      const owner = owners.get(key(item));
      if (owner !== undefined && owner !== server && this.comesFirst(owner, server)) {
        this.warnOnce(`${kind}\u0000${key(item)}\u0000${server}`, `servers "${owner}" and "${server}" both offer "${key(item)}"; the gateway offers the one of "${owner}", which comes first in the configuration`);
        continue;
      }
      owners.set(key(item), server);
      const shown = (item as Resource).title ?? item.name;
      out.push({ ...item, title: `[${server}] ${shown}` });
    }
    return out;
  }

  private namePrompts(server: string, items: Prompt[]): Prompt[] {
    const names = assignToolNames(items.map((p) => ({ server, tool: p.name })), this.servers.serverPrefixes());
    return items.map((prompt, i) => {
      let name = names[i]!;
      const taken = this.prompts.get(name);
      // Names are given a page at a time: one taken on an earlier page by another prompt gets a suffix.
      if (taken && (taken.server !== server || taken.name !== prompt.name)) name = withIdentitySuffix(name, server, prompt.name);
      this.prompts.set(name, { server, name: prompt.name });
      return { ...prompt, name };
    });
  }

  /** True when `a` comes before `b` in the configuration and is still offering resources. */
  private comesFirst(a: string, b: string): boolean {
    const order = this.offering('resources').map((c) => c.name);
    const ia = order.indexOf(a);
    return ia >= 0 && ia < order.indexOf(b);
  }

  private firstFrom(kind: ListKind, index: number): ListPosition | undefined {
    const server = this.offering(LISTS[kind].capability).slice(index)[0];
    return server ? { server: server.name } : undefined;
  }

  /** The first page of the next server after `server` that offers `kind`. */
  private after(kind: ListKind, server: string): ListPosition | undefined {
    const all = this.servers.listConnections();
    const at = all.findIndex((c) => c.name === server);
    if (at < 0) return undefined; // removed meanwhile: its place in the order is gone, so the list ends
    const next = all.slice(at + 1).find((c) => c.currentState === 'ready' && c.serverCapabilities?.[LISTS[kind].capability] !== undefined);
    return next ? { server: next.name } : undefined;
  }

  private resume(kind: ListKind, cursor: string): ListPosition | undefined {
    const position = decodeCursor(cursor);
    if (!position) throw gatewayError(ProtocolErrorCode.InvalidParams, `The cursor "${cursor.slice(0, 40)}" was not made by this gateway, or is damaged: list again without a cursor.`);
    const connection = this.servers.listConnections().find((c) => c.name === position.server);
    if (!connection) throw gatewayError(ProtocolErrorCode.InvalidParams, `The cursor points at server "${position.server}", which is no longer configured: list again without a cursor.`);
    const offers = connection.currentState === 'ready' && connection.serverCapabilities?.[LISTS[kind].capability] !== undefined;
    // A server that stopped offering since the last page is passed over; the list goes on after it.
    return offers ? position : this.after(kind, position.server);
  }

  private warnOnce(key: string, message: string): void {
    if (this.warned.has(key)) return;
    this.warned.add(key);
    this.log(message);
  }
}

/** The `ui://` resource of an MCP App tool: `_meta.ui.resourceUri`, or the older flat `_meta["ui/resourceUri"]`. */
export function uiResourceUri(tool: Pick<RoutedTool, '_meta'>): string | undefined {
  const meta = tool._meta;
  if (!meta) return undefined;
  const ui = meta['ui'];
  const uri = isRecord(ui) ? ui['resourceUri'] : meta['ui/resourceUri'];
  return typeof uri === 'string' ? uri : undefined;
}

function matchesTemplate(template: string, uri: string): boolean {
  try {
    return new UriTemplate(template).match(uri) !== null;
  } catch {
    return false; // a template the SDK cannot parse matches nothing
  }
}
