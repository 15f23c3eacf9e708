import type { CallToolResult, Tool } from '@modelcontextprotocol/server';
import type { RoutedTool } from '../router/toolRouter';
import { isRecord } from '../util/isRecord';

/**
 * The gateway's own two tools, as every client sees them whatever revision it speaks: their definitions,
 * the checks of their arguments, and the shapes of their answers.
 */

export const SEARCH_TOOL_NAME = 'toolRouter_searchTools';
export const CALL_TOOL_NAME = 'toolRouter_callTool';
/** Enough to choose from for one task; a client that wants more asks for it. */
export const DEFAULT_SEARCH_LIMIT = 10;
/** Past 50 results a search costs as many tokens as listing a mid-sized catalogue, which it exists to avoid. */
export const MAX_SEARCH_LIMIT = 50;

type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

export const SEARCH_TOOL: Tool = {
  name: SEARCH_TOOL_NAME,
  title: 'Search tools',
  description:
    'Find the tools best suited to a task among every tool of the MCP servers behind this router. Returns the best matches first, each with its name, server, description, relevance score and input schema. Call the one you need with toolRouter_callTool.',
  inputSchema: {
    type: 'object',
    properties: {
      query: { type: 'string', description: 'The task in plain words, e.g. "read a file" or "add a note to my knowledge graph".' },
      limit: { type: 'integer', minimum: 1, maximum: MAX_SEARCH_LIMIT, default: DEFAULT_SEARCH_LIMIT, description: 'How many tools to return.' },
    },
    required: ['query'],
    additionalProperties: false,
  },
  annotations: { readOnlyHint: true, openWorldHint: false },
};

export const CALL_TOOL: Tool = {
  name: CALL_TOOL_NAME,
  title: 'Call a tool',
  description:
    'Call any tool of the MCP servers behind this router by its name (as returned by toolRouter_searchTools). The arguments are checked against the tool\'s input schema first; errors name each wrong argument. Returns the result envelope as JSON.',
  inputSchema: {
    type: 'object',
    properties: {
      name: { type: 'string', description: 'The tool\'s name, e.g. "files_read_file".' },
      arguments: { type: 'object', description: 'The tool\'s arguments, matching its input schema.' },
    },
    required: ['name'],
    additionalProperties: false,
  },
};

export const META_TOOLS: ReadonlySet<string> = new Set([SEARCH_TOOL_NAME, CALL_TOOL_NAME]);

/** A routed tool as the client lists it: the server's definition under the routed name, UI metadata and all. */
export function toMcpTool(tool: RoutedTool): Tool {
  return {
    name: tool.name,
    ...(tool.title ? { title: tool.title } : {}),
    description: tool.description,
    // The server's schemas, verbatim; the router checks arguments against the input schema before any call.
    inputSchema: tool.inputSchema as Tool['inputSchema'],
    ...(tool.outputSchema !== undefined ? { outputSchema: tool.outputSchema as Tool['outputSchema'] } : {}),
    ...(Object.keys(tool.annotations).length > 0 ? { annotations: tool.annotations } : {}),
    ...(tool.icons ? { icons: tool.icons as Tool['icons'] } : {}),
    // An MCP App's `ui` (its ui:// resource, readable through the gateway) lives here.
    ...(tool._meta ? { _meta: { ...tool._meta } } : {}),
  };
}

/** A result's structured content, when it is an object (the only kind MCP allows there). */
export function structured(value: unknown): { structuredContent?: Record<string, unknown> } {
  return isRecord(value) ? { structuredContent: value } : {};
}

export function errorResult(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] };
}

function unknownKeys(args: Record<string, unknown>, known: readonly string[], tool: string): string | undefined {
  const extra = Object.keys(args).filter((k) => !known.includes(k));
  if (extra.length === 0) return undefined;
  return `${tool} got unknown argument(s) ${extra.map((k) => `"${k}"`).join(', ')}; it takes ${known.map((k) => `"${k}"`).join(' and ')}.`;
}

export function checkSearchArguments(args: Record<string, unknown> | undefined): Checked<{ query: string; limit: number }> {
  const input = args ?? {};
  const extra = unknownKeys(input, ['query', 'limit'], SEARCH_TOOL_NAME);
  if (extra) return { ok: false, message: extra };
  const query = input['query'];
  if (typeof query !== 'string' || query.trim() === '') {
    return { ok: false, message: `${SEARCH_TOOL_NAME}: "query" must be a non-empty string describing the task, got ${shown(query)}.` };
  }
  let limit = DEFAULT_SEARCH_LIMIT;
  const raw = input['limit'];
  if (raw !== undefined && raw !== null) {
    // Numeric strings are accepted, as the router accepts them for any integer argument.
    const n = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_SEARCH_LIMIT) {
      return { ok: false, message: `${SEARCH_TOOL_NAME}: "limit" must be a whole number from 1 to ${MAX_SEARCH_LIMIT}, got ${shown(raw)}.` };
    }
    limit = n;
  }
  return { ok: true, value: { query: query.trim(), limit } };
}

export function checkCallArguments(args: Record<string, unknown> | undefined): Checked<{ name: string; arguments: unknown }> {
  const input = args ?? {};
  const extra = unknownKeys(input, ['name', 'arguments'], CALL_TOOL_NAME);
  if (extra) return { ok: false, message: extra };
  const name = input['name'];
  if (typeof name !== 'string' || name.trim() === '') {
    return { ok: false, message: `${CALL_TOOL_NAME}: "name" must be the name of a tool, as ${SEARCH_TOOL_NAME} returns it, got ${shown(name)}.` };
  }
  if (META_TOOLS.has(name)) return { ok: false, message: `${CALL_TOOL_NAME} calls the routed tools; call "${name}" directly instead.` };
  const value = input['arguments'];
  // A JSON string is passed on: the router parses it, as it does for every call.
  if (value !== undefined && value !== null && !isRecord(value) && typeof value !== 'string') {
    return { ok: false, message: `${CALL_TOOL_NAME}: "arguments" must be an object with the tool's arguments, got ${shown(value)}.` };
  }
  return { ok: true, value: { name: name.trim(), arguments: value ?? {} } };
}

function shown(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
