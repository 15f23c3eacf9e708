import type { ServerTool, ToolAnnotations } from '../connection/serverConnection';

/** A tool as the router exposes it, and when two catalogues of them differ for those who listen. */

export interface RoutedTool {
  /** The exposed, provider-safe name. */
  readonly name: string;
  readonly server: string;
  readonly originalName: string;
  readonly title?: string;
  /** The server's description tagged with the server: `[server] …`. */
  readonly description: string;
  readonly originalDescription: string;
  /** The server's schema, verbatim: what the model sees. */
  readonly inputSchema: unknown;
  readonly annotations: ToolAnnotations;
  /** The server's output schema, icons and `_meta` (an MCP App's `ui`), verbatim, for the gateway's clients. */
  readonly outputSchema?: unknown;
  readonly icons?: readonly unknown[];
  readonly _meta?: Readonly<Record<string, unknown>>;
  /**
   * Set when the schema is missing or cannot check arguments; such a tool fails closed unless allowed.
   * Schemas compile after listing (toolValidators.ts), so one that does not compile is marked a moment later.
   */
  readonly schemaProblem?: string;
}

/** `tool` of `server` under its exposed `name`. */
export function routedTool(name: string, server: string, tool: ServerTool, schemaProblem: string | undefined): RoutedTool {
  const description = tool.description ?? tool.annotations?.title ?? tool.title ?? '';
  return {
    name,
    server,
    originalName: tool.name,
    ...(tool.title ?? tool.annotations?.title ? { title: tool.title ?? tool.annotations?.title } : {}),
    description: `[${server}] ${description}`.trimEnd(),
    originalDescription: description,
    inputSchema: tool.inputSchema ?? { type: 'object', properties: {} },
    annotations: tool.annotations ?? {},
    ...(tool.outputSchema !== undefined ? { outputSchema: tool.outputSchema } : {}),
    ...(tool.icons ? { icons: tool.icons } : {}),
    ...(tool._meta ? { _meta: tool._meta } : {}),
    ...(schemaProblem !== undefined ? { schemaProblem } : {}),
  };
}

/** Whether two catalogues (exposed name → tool) would look the same to every listener. */
export function sameCatalogue(a: ReadonlyMap<string, { readonly tool: RoutedTool }>, b: ReadonlyMap<string, { readonly tool: RoutedTool }>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, { tool: v }] of a) {
    const w = b.get(k)?.tool;
    if (!w || w.server !== v.server || w.originalDescription !== v.originalDescription || w.schemaProblem !== v.schemaProblem || safeStringify(w.inputSchema) !== safeStringify(v.inputSchema)) return false;
    // What the gateway passes on to its clients counts too: a changed output schema or UI is a new tool to them.
    if (safeStringify(passedOn(w)) !== safeStringify(passedOn(v))) return false;
  }
  return true;
}

function passedOn(tool: RoutedTool): unknown[] {
  return [tool.title, tool.annotations, tool.outputSchema, tool.icons, tool._meta];
}

export function safeStringify(v: unknown): string {
  try {
    return JSON.stringify(v) ?? 'undefined';
  } catch {
    return '[unserialisable]';
  }
}
