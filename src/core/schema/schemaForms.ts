/**
 * Helpers for asking a person for a tool's arguments: a flat schema becomes one question per property,
 * and any other schema becomes a JSON skeleton to edit.
 */
import { isRecord as isObject } from '../util/isRecord';

export type FieldKind = 'string' | 'number' | 'integer' | 'boolean' | 'enum' | 'multi';

export interface FormField {
  readonly name: string;
  readonly kind: FieldKind;
  readonly required: boolean;
  /** The schema's `title`, for a label; the name when absent. */
  readonly title?: string;
  readonly description?: string;
  readonly defaultValue?: unknown;
  /** For `enum` and `multi` fields: the allowed values. */
  readonly options?: readonly unknown[];
  /** Display titles of the options, in the same order, when the schema gives them. */
  readonly labels?: readonly string[];
}

type Schema = Record<string, unknown>;


/** The single non-null type of a property schema, or undefined when it has several or none. */
function singleType(s: Schema): string | undefined {
  const t = s['type'];
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) {
    const nonNull = t.filter((x) => x !== 'null');
    return nonNull.length === 1 && typeof nonNull[0] === 'string' ? nonNull[0] : undefined;
  }
  return undefined;
}

/**
 * One field per property when every property is a string, number, integer, boolean or an enum of
 * primitives; undefined when the schema has nested objects, arrays, combinators or references.
 */
export function flatFields(schema: unknown): FormField[] | undefined {
  if (!isObject(schema)) return undefined;
  if (schema['type'] !== undefined && schema['type'] !== 'object') return undefined;
  for (const key of ['anyOf', 'oneOf', 'allOf', '$ref', 'if', 'patternProperties', 'dependentSchemas']) if (key in schema) return undefined;
  const properties = isObject(schema['properties']) ? schema['properties'] : {};
  const required = new Set(Array.isArray(schema['required']) ? schema['required'].filter((r): r is string => typeof r === 'string') : []);
  const fields: FormField[] = [];
  for (const [name, raw] of Object.entries(properties)) {
    if (!isObject(raw)) return undefined;
    const base = {
      name,
      required: required.has(name),
      ...(typeof raw['title'] === 'string' ? { title: raw['title'] } : {}),
      ...(typeof raw['description'] === 'string' ? { description: raw['description'] } : {}),
      ...('default' in raw ? { defaultValue: raw['default'] } : {}),
    };
    const single = choicesOf(raw);
    if (single) {
      fields.push({ ...base, kind: 'enum', ...single });
      continue;
    }
    // Multiple choice: an array of enum values (elicitation's multi-select enums, SEP-1330).
    const items = raw['items'];
    const multi = singleType(raw) === 'array' && isObject(items) ? choicesOf(items) : undefined;
    if (multi) {
      fields.push({ ...base, kind: 'multi', ...multi });
      continue;
    }
    const type = singleType(raw);
    if (type === 'string' || type === 'number' || type === 'integer' || type === 'boolean') fields.push({ ...base, kind: type });
    else return undefined;
  }
  return fields;
}

/**
 * The choices of an enum property, in the three forms schemas use for them (SEP-1330): `enum` (with
 * legacy `enumNames` titles), or `oneOf` / `anyOf` of `{const, title}`; undefined when it is not one.
 */
function choicesOf(schema: Schema): { options: unknown[]; labels?: string[] } | undefined {
  const primitive = (v: unknown): boolean => v === null || ['string', 'number', 'boolean'].includes(typeof v);
  const values = schema['enum'];
  if (Array.isArray(values) && values.length > 0 && values.every(primitive)) {
    const names = schema['enumNames'];
    const labels = Array.isArray(names) && names.length === values.length && names.every((n) => typeof n === 'string') ? (names as string[]) : undefined;
    return { options: values, ...(labels ? { labels } : {}) };
  }
  for (const key of ['oneOf', 'anyOf']) {
    const branches = schema[key];
    if (!Array.isArray(branches) || branches.length === 0 || !branches.every((b) => isObject(b) && 'const' in b && primitive(b['const']))) continue;
    const list = branches as Schema[];
    return { options: list.map((b) => b['const']), labels: list.map((b) => (typeof b['title'] === 'string' ? b['title'] : String(b['const']))) };
  }
  return undefined;
}

/** Parses what a person typed for a field; a string means "not valid, because…". */
export function parseFieldValue(field: FormField, text: string): { value: unknown } | string {
  switch (field.kind) {
    case 'string':
      return { value: text };
    case 'number':
    case 'integer': {
      const n = Number(text.trim());
      if (text.trim() === '' || !Number.isFinite(n)) return `"${field.name}" needs a number`;
      if (field.kind === 'integer' && !Number.isInteger(n)) return `"${field.name}" needs a whole number`;
      return { value: n };
    }
    case 'boolean':
      if (text === 'true' || text === 'false') return { value: text === 'true' };
      return `"${field.name}" needs true or false`;
    case 'enum':
      return { value: field.options?.find((o) => String(o) === text) ?? text };
    case 'multi': {
      const picked = text.split(',').map((t) => t.trim()).filter(Boolean);
      const unknown = picked.filter((t) => !field.options?.some((o) => String(o) === t));
      if (unknown.length > 0) return `"${field.name}" takes only ${field.options?.map(String).join(', ')}`;
      return { value: picked.map((t) => field.options!.find((o) => String(o) === t)) };
    }
  }
}

/** Nesting below this is left as `{}` in a skeleton; deeper structure is for the person to fill in. */
const MAX_SKELETON_DEPTH = 6;

/**
 * A JSON value shaped like the schema, to be edited: defaults where the schema gives them, the first enum
 * value, and empty values by type otherwise. Every property is included so people see what exists.
 */
export function schemaSkeleton(schema: unknown, root: unknown = schema, depth = 0): unknown {
  if (!isObject(schema) || depth > MAX_SKELETON_DEPTH) return {};
  if ('default' in schema) return schema['default'];
  if ('const' in schema) return schema['const'];
  if (Array.isArray(schema['enum']) && schema['enum'].length > 0) return schema['enum'][0];
  const ref = schema['$ref'];
  if (typeof ref === 'string' && ref.startsWith('#/')) {
    let target: unknown = root;
    for (const part of ref.slice(2).split('/')) target = isObject(target) ? target[part.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
    return schemaSkeleton(target, root, depth + 1);
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    const alternatives = schema[key];
    if (Array.isArray(alternatives)) {
      const firstNonNull = alternatives.find((a) => isObject(a) && a['type'] !== 'null');
      return schemaSkeleton(firstNonNull, root, depth + 1);
    }
  }
  const type = singleType(schema) ?? (isObject(schema['properties']) ? 'object' : undefined);
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const properties = isObject(schema['properties']) ? schema['properties'] : {};
      for (const [name, sub] of Object.entries(properties)) {
        Object.defineProperty(out, name, { value: schemaSkeleton(sub, root, depth + 1), enumerable: true, writable: true, configurable: true });
      }
      return out;
    }
    case 'array':
      return [];
    case 'string':
      return '';
    case 'number':
    case 'integer':
      return 0;
    case 'boolean':
      return false;
    default:
      return null;
  }
}
