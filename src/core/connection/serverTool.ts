/**
 * A tool as its server listed it, checked: the fields the router acts on, and the ones it passes on to
 * the gateway's clients unchanged (output schema, icons, `_meta` such as an MCP App's `ui`).
 */
import { isRecord } from '../util/isRecord';

/** A tool as the server listed it. */
export interface ServerTool {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema?: unknown;
  readonly outputSchema?: unknown;
  readonly annotations?: ToolAnnotations;
  /** The server's icons, verbatim (an array of `{ src, mimeType?, sizes?, theme? }`). */
  readonly icons?: readonly unknown[];
  /** The server's metadata, verbatim: an MCP App's `ui` (its `ui://` resource) lives here. */
  readonly _meta?: Readonly<Record<string, unknown>>;
}

export interface ToolAnnotations {
  readonly title?: string;
  readonly readOnlyHint?: boolean;
  readonly destructiveHint?: boolean;
  readonly idempotentHint?: boolean;
  readonly openWorldHint?: boolean;
}

/** Checks one entry of `tools/list` and keeps only the fields the router understands; a string means "invalid, because…". */
export function toServerTool(raw: unknown): ServerTool | string {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return `an entry is ${raw === null ? 'null' : typeof raw}, not an object`;
  const r = raw as Record<string, unknown>;
  if (typeof r['name'] !== 'string' || r['name'].length === 0) return `an entry has no string "name" (${JSON.stringify(r['name'])?.slice(0, 60)})`;
  if (r['name'].length > 512) return `a tool name is ${r['name'].length} characters long`;
  const annotations = isRecord(r['annotations']) ? pickAnnotations(r['annotations']) : undefined;
  return {
    name: r['name'],
    ...(typeof r['title'] === 'string' ? { title: r['title'] } : {}),
    ...(typeof r['description'] === 'string' ? { description: r['description'] } : {}),
    ...('inputSchema' in r ? { inputSchema: r['inputSchema'] } : {}),
    ...('outputSchema' in r ? { outputSchema: r['outputSchema'] } : {}),
    ...(annotations ? { annotations } : {}),
    ...(Array.isArray(r['icons']) ? { icons: r['icons'].filter(isRecord) } : {}),
    ...(isRecord(r['_meta']) ? { _meta: r['_meta'] } : {}),
  };
}

function pickAnnotations(a: Record<string, unknown>): ToolAnnotations {
  const out: Record<string, unknown> = {};
  for (const key of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) if (typeof a[key] === 'boolean') out[key] = a[key];
  if (typeof a['title'] === 'string') out['title'] = a['title'];
  return out as ToolAnnotations;
}
