import type { Client, ListChangedHandlers } from '@modelcontextprotocol/client';
import * as z from 'zod/v4';
import { describeError } from '../errors/describeError';
import type { ServerNotice } from './serverNotices';
import { toServerTool, type ServerTool } from './serverTool';

/** A server that keeps handing out cursors is cut off here; no real server has this many pages of tools. */
export const MAX_TOOL_PAGES = 100;
/** list_changed notifications within this window collapse into one refresh, so a flood cannot stall us. */
export const TOOL_REFRESH_DEBOUNCE_MS = 100;

const LooseToolListSchema = z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() });

/** What a connection lends its tool list. */
export interface ToolListHost {
  /** The connected client, if any. */
  client(): Client | undefined;
  /** Counts the connection's starts: a list read for an older one is dropped. */
  generation(): number;
  setTools(tools: ServerTool[]): void;
  log(line: string): void;
  notify(notice: ServerNotice): void;
}

/** One server's tool list: read in full at start, and again when the server says it changed or on request. */
export class ToolListSync {
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private queued = false;

  constructor(
    private readonly host: ToolListHost,
    private readonly timeoutMs: number,
  ) {}

  /** Every page of the server's tools/list, the invalid entries logged and left out. */
  async list(client: Client): Promise<ServerTool[]> {
    if (client.getProtocolEra() === 'modern') return this.listModern(client);
    const out: ServerTool[] = [];
    const seenCursors = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < MAX_TOOL_PAGES; page++) {
      const result = await client.request({ method: 'tools/list', params: cursor ? { cursor } : {} }, LooseToolListSchema, { timeout: this.timeoutMs });
      out.push(...this.validTools(result.tools));
      cursor = result.nextCursor;
      if (!cursor) return out;
      if (seenCursors.has(cursor)) {
        this.host.log(`[router] tools/list returned cursor "${cursor.slice(0, 40)}" twice; stopped paging`);
        return out;
      }
      seenCursors.add(cursor);
    }
    this.host.log(`[router] tools/list still had more pages after ${MAX_TOOL_PAGES}; stopped paging`);
    return out;
  }

  /** Reads the list again now; a refresh asked for while one runs follows it, once. */
  refresh(): Promise<void> {
    if (this.inFlight) {
      this.queued = true;
      return this.inFlight;
    }
    const generation = this.host.generation();
    this.inFlight = (async () => {
      try {
        const client = this.host.client();
        if (!client) return;
        const tools = await this.list(client);
        if (generation !== this.host.generation()) return;
        this.host.setTools(tools);
      } catch (error) {
        this.host.log(`[router] refreshing the tool list failed: ${describeError(error)}`);
      } finally {
        this.inFlight = undefined;
        if (this.queued) {
          this.queued = false;
          void this.refresh();
        }
      }
    })();
    return this.inFlight;
  }

  /** A list_changed for tools: the list is read again once the burst is over (refetched, not from the SDK's cache). */
  changed(generation: number): void {
    if (generation !== this.host.generation()) return;
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.refresh();
    }, TOOL_REFRESH_DEBOUNCE_MS);
    this.timer.unref?.();
  }

  /**
   * The lists whose changes the router hears. A 2026-07-28 server sends changes only on a
   * `subscriptions/listen` stream, which the SDK opens for the lists named here (and the server offers).
   */
  handlers(generation: number): ListChangedHandlers {
    const notice = (kind: 'promptsChanged' | 'resourcesChanged') => (): void => {
      if (generation === this.host.generation()) this.host.notify({ kind });
    };
    return {
      tools: { autoRefresh: false, debounceMs: 0, onChanged: () => this.changed(generation) },
      prompts: { autoRefresh: false, debounceMs: 0, onChanged: notice('promptsChanged') },
      resources: { autoRefresh: false, debounceMs: 0, onChanged: notice('resourcesChanged') },
    };
  }

  /** Drops a pending debounced refresh. */
  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /**
   * A 2026-07-28 server's tools through the SDK, which keeps the list for callTool's Mcp-Param-* headers
   * and leaves out tools whose x-mcp-header marks are invalid. Always refetched: the router keeps its own
   * list, and reads it again only when it changed (list_changed evicts the SDK's copy too) or on request.
   */
  private async listModern(client: Client): Promise<ServerTool[]> {
    const result = await client.listTools(undefined, { cacheMode: 'refresh', timeout: this.timeoutMs });
    return this.validTools(result.tools);
  }

  /** The entries of a tools/list page that are tools; each one that is not is logged and skipped. */
  private validTools(listed: readonly unknown[]): ServerTool[] {
    const out: ServerTool[] = [];
    for (const raw of listed) {
      const tool = toServerTool(raw);
      if (typeof tool === 'string') this.host.log(`[router] skipped an invalid tool in tools/list: ${tool}`);
      else out.push(tool);
    }
    return out;
  }
}
