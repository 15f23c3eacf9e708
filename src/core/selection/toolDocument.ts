/**
 * What a tool says about itself, pulled apart into the fields that ranking weighs differently: its
 * name, its description, and its parameters (names, descriptions, enum values) from the input schema.
 * Lexical ranking and the embedding text of the default model both read tools through this.
 */
import { splitIdentifiers } from '../embedding/textPreprocess';
import { isRecord as isObject } from '../util/isRecord';

/** The shape selection needs from a tool; an MCP tool (`name`, `description`, `inputSchema`) fits it. */
export interface RankableTool {
  readonly id: string;
  readonly name: string;
  readonly description?: string;
  readonly inputSchema?: unknown;
  /** The server the tool comes from, when known: its name is a word about what the tool is for. */
  readonly server?: string;
}

export interface ToolFields {
  /** The name with its identifiers split: `read_text_file` → `read text file`. */
  readonly name: string;
  readonly description: string;
  /** Every parameter name, split, nested ones included. */
  readonly parameterNames: readonly string[];
  readonly parameterDescriptions: readonly string[];
  /** Enum and const values of string parameters (`"celsius"`, `"fahrenheit"`). */
  readonly enumValues: readonly string[];
  /** The server's name, identifiers split ('' when unknown). */
  readonly server: string;
}

/** Deep schemas are rare and their inner levels say little; this keeps a hostile schema cheap. */
const MAX_SCHEMA_DEPTH = 4;
/** Enums longer than this are lists of data (country codes, model ids), not words that describe the tool. */
const MAX_ENUM_VALUES = 30;

type Schema = Record<string, unknown>;


export function toolFields(tool: RankableTool): ToolFields {
  const parameterNames: string[] = [];
  const parameterDescriptions: string[] = [];
  const enumValues: string[] = [];

  const visit = (schema: unknown, depth: number): void => {
    if (!isObject(schema) || depth > MAX_SCHEMA_DEPTH) return;
    const properties = schema['properties'];
    if (isObject(properties)) {
      for (const [name, property] of Object.entries(properties)) {
        parameterNames.push(splitIdentifiers(name));
        if (!isObject(property)) continue;
        if (typeof property['description'] === 'string') parameterDescriptions.push(property['description']);
        collectEnum(property, enumValues);
        visit(property, depth + 1);
      }
    }
    visit(schema['items'], depth + 1);
    for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
      const branches = schema[key];
      if (Array.isArray(branches)) for (const branch of branches) visit(branch, depth + 1);
    }
  };
  visit(tool.inputSchema, 0);

  return {
    name: splitIdentifiers(tool.name),
    description: tool.description ?? '',
    parameterNames,
    parameterDescriptions,
    enumValues,
    server: tool.server ? splitIdentifiers(tool.server) : '',
  };
}

function collectEnum(property: Schema, out: string[]): void {
  const values = Array.isArray(property['enum']) ? property['enum'] : 'const' in property ? [property['const']] : [];
  if (values.length > MAX_ENUM_VALUES) return;
  for (const v of values) if (typeof v === 'string') out.push(splitIdentifiers(v));
}

/**
 * The text the default model embeds for a tool: `name: description` followed by its parameter names,
 * identifiers split. Parameter descriptions are left out: they make texts long for no gain we could see.
 */
export function toolEmbeddingText(tool: RankableTool): string {
  return embeddingTextOf(toolFields(tool));
}

/** {@link toolEmbeddingText} of a tool already pulled apart. */
export function embeddingTextOf(fields: ToolFields): string {
  const head = fields.description ? `${fields.name}: ${fields.description}` : fields.name;
  return fields.parameterNames.length > 0 ? `${head} ${fields.parameterNames.join(' ')}` : head;
}
