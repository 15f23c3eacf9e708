import { isRecord as isObject } from '../util/isRecord';
import { describeError } from '../errors/describeError';
/**
 * Turns what a model sent into the arguments a tool expects, before validation.
 *
 * Models often send `"true"` for a boolean, `"5"` for a number, `null` for an optional property they
 * mean to omit, or the whole argument object as a JSON string. Each fix is made only where the schema
 * asks for that type, so a string property that happens to hold `"true"` is left alone.
 * The result is a fresh object built with own properties only, so keys such as `__proto__` stay data.
 */

export type ParsedArguments = { ok: true; value: Record<string, unknown> } | { ok: false; message: string };

/**
 * Arguments nesting deeper than this are refused before anything walks them: a model's arguments never
 * nest so far, and hostile input 100,000 deep would overflow the stack of every recursive step after.
 */
export const MAX_ARGUMENT_DEPTH = 64;
/**
 * Arguments larger than this as JSON are refused: a model writes at most a few hundred KB per call (its
 * output-token limit). The HTTP gateway refuses larger bodies sooner (MAX_BODY_BYTES, httpGateway.ts);
 * this bounds every way in, whatever its transport allows.
 */
export const MAX_ARGUMENT_BYTES = 4 * 1024 * 1024;
/** More values than this (objects, arrays and leaves) are refused: more than a model's output can hold, few enough to check in milliseconds. */
export const MAX_ARGUMENT_NODES = 100_000;

export function parseArguments(raw: unknown): ParsedArguments {
  if (raw === undefined || raw === null) return { ok: true, value: {} };
  let value: unknown = raw;
  if (typeof raw === 'string') {
    const text = raw.trim();
    if (text === '') return { ok: true, value: {} };
    // Checked on the text first, so absurd input is never built into objects at all.
    const tooBig = checkJsonTextLimits(text);
    if (tooBig) return { ok: false, message: tooBig };
    try {
      value = JSON.parse(text);
    } catch (error) {
      return { ok: false, message: `the arguments are a string that is not valid JSON (${describeError(error)}); send a JSON object` };
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, message: `the arguments must be a JSON object, got ${Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value}` };
  }
  const overLimit = checkArgumentLimits(value);
  if (overLimit) return { ok: false, message: overLimit };
  return { ok: true, value: value as Record<string, unknown> };
}

function tooDeep(): string {
  return `the arguments nest more than ${MAX_ARGUMENT_DEPTH} levels deep (MAX_ARGUMENT_DEPTH); send flatter arguments`;
}
function tooLarge(bytes: number, atLeast: boolean): string {
  return `the arguments are ${atLeast ? 'at least ' : ''}${bytes} bytes as JSON, above the ${MAX_ARGUMENT_BYTES}-byte limit (MAX_ARGUMENT_BYTES); send less, or pass large content by reference (a path or URL)`;
}
function tooMany(): string {
  return `the arguments hold more than ${MAX_ARGUMENT_NODES} values (MAX_ARGUMENT_NODES); send fewer, or pass large content by reference (a path or URL)`;
}

/**
 * Size and nesting of JSON text, without parsing it: one pass over the characters, brackets inside
 * strings ignored. Returns why the text is refused, or undefined.
 */
export function checkJsonTextLimits(text: string): string | undefined {
  // Each UTF-16 unit is at most 3 UTF-8 bytes, so only long strings need counting.
  if (text.length * 3 > MAX_ARGUMENT_BYTES) {
    const bytes = Buffer.byteLength(text, 'utf8');
    if (bytes > MAX_ARGUMENT_BYTES) return tooLarge(bytes, false);
  }
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > MAX_ARGUMENT_DEPTH) return tooDeep();
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
  }
  return undefined;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/**
 * Depth, value count and JSON size of arguments given as a value. Iterative, with an explicit stack, so
 * it cannot overflow on the input it exists to refuse; it stops at the first limit passed (a cycle
 * passes the depth limit). The size counts compact JSON without escapes: a close lower bound.
 */
export function checkArgumentLimits(value: unknown): string | undefined {
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  let nodes = 0;
  let bytes = 0;
  while (stack.length > 0) {
    const { value: current, depth } = stack.pop()!;
    if (++nodes > MAX_ARGUMENT_NODES) return tooMany();
    if (typeof current === 'string') bytes += Buffer.byteLength(current, 'utf8') + 2;
    else if (typeof current === 'number' || typeof current === 'boolean' || typeof current === 'bigint') bytes += String(current).length;
    else if (current === null) bytes += 4;
    else if (typeof current === 'object') {
      if (depth + 1 > MAX_ARGUMENT_DEPTH) return tooDeep();
      if (Array.isArray(current)) {
        // A huge (even sparse) array is refused by its length, before it is walked.
        if (nodes + current.length > MAX_ARGUMENT_NODES) return tooMany();
        bytes += 2 + Math.max(0, current.length - 1);
        for (let i = 0; i < current.length; i++) stack.push({ value: current[i], depth: depth + 1 });
      } else {
        const keys = Object.keys(current);
        if (nodes + keys.length > MAX_ARGUMENT_NODES) return tooMany();
        bytes += 2 + Math.max(0, keys.length - 1);
        for (const key of keys) {
          bytes += Buffer.byteLength(key, 'utf8') + 3;
          stack.push({ value: (current as Record<string, unknown>)[key], depth: depth + 1 });
        }
      }
    }
    if (bytes > MAX_ARGUMENT_BYTES) return tooLarge(bytes, true);
  }
  return undefined;
}

type Schema = Record<string, unknown>;

export interface NormalizeResult {
  readonly value: Record<string, unknown>;
  /** What was changed, e.g. `/limit: "5" → 5`; shown in logs and the panel. */
  readonly changes: string[];
}

export function normalizeArguments(args: Record<string, unknown>, schema: unknown): NormalizeResult {
  const changes: string[] = [];
  const root = isObject(schema) ? schema : {};
  const value = normalizeValue(args, root, root, '', changes, 0);
  return { value: isObject(value) ? value : args, changes };
}

function normalizeValue(value: unknown, schema: Schema, root: Schema, at: string, changes: string[], depth: number): unknown {
  // parseArguments refuses deeper input; this guard keeps direct callers safe too.
  if (depth > MAX_ARGUMENT_DEPTH) return value;
  const s = resolveLocalRef(schema, root);
  const types = schemaTypes(s);

  if (typeof value === 'string' && !types.has('string')) {
    if (types.has('boolean') && (value === 'true' || value === 'false')) {
      changes.push(`${at || '/'}: "${value}" → ${value}`);
      return value === 'true';
    }
    if ((types.has('number') || types.has('integer')) && NUMERIC.test(value.trim())) {
      const n = Number(value.trim());
      // A whole number past 2^53 would silently change (an ID "12345678901234567890" is not 12345678901234567000).
      const exact = !WHOLE.test(value.trim()) || Number.isSafeInteger(n);
      if (Number.isFinite(n) && exact && (types.has('number') || Number.isInteger(n))) {
        changes.push(`${at || '/'}: "${truncate(value)}" → ${n}`);
        return n;
      }
    }
    return value;
  }

  if (Array.isArray(value)) {
    const items = isObject(s['items']) ? s['items'] : undefined;
    if (!items) return value;
    const mapped = value.map((item, i) => normalizeValue(item, items, root, `${at}/${i}`, changes, depth + 1));
    return mapped.some((item, i) => item !== value[i]) ? mapped : value;
  }

  if (isObject(value)) {
    const properties = isObject(s['properties']) ? s['properties'] : {};
    const required = Array.isArray(s['required']) ? s['required'] : [];
    // Copy on write: arguments that need no fix are passed through as they are (the common, fast case).
    let out: Record<string, unknown> | undefined;
    const keys = Object.keys(value);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      const child = value[key];
      const propertySchema = Object.prototype.hasOwnProperty.call(properties, key) && isObject(properties[key]) ? properties[key] : undefined;
      let next: unknown = child;
      let drop = false;
      if (propertySchema && child === null) {
        drop = !required.includes(key) && !allowsNull(resolveLocalRef(propertySchema, root));
        if (drop) changes.push(`${at}/${key}: null removed (optional)`);
      } else if (propertySchema && (typeof child === 'string' || typeof child === 'object')) {
        next = normalizeValue(child, propertySchema, root, `${at}/${key}`, changes, depth + 1);
      }
      if (!out && !drop && next === child) continue;
      out ??= copyKeys(value, keys, i);
      if (!drop) defineOwn(out, key, next);
    }
    return out ?? value;
  }
  return value;
}

/** Copies keys[0..upTo) of `source`; later keys are added by the caller as it walks on. */
function copyKeys(source: Record<string, unknown>, keys: readonly string[], upTo: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let j = 0; j < upTo; j++) defineOwn(out, keys[j]!, source[keys[j]!]);
  return out;
}

/** defineProperty, not assignment: `out["__proto__"] = x` would replace the prototype. */
function defineOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

const NUMERIC = /^-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;
const WHOLE = /^-?\d+$/;

function allowsNull(schema: Schema): boolean {
  return schemaTypes(schema).has('null') || schema['const'] === null || (Array.isArray(schema['enum']) && schema['enum'].includes(null));
}

function schemaTypes(schema: Schema): Set<string> {
  const t = schema['type'];
  const out = new Set<string>();
  if (typeof t === 'string') out.add(t);
  else if (Array.isArray(t)) for (const x of t) if (typeof x === 'string') out.add(x);
  // anyOf/oneOf of simple types (common in generated schemas: {"anyOf":[{"type":"number"},{"type":"null"}]})
  for (const key of ['anyOf', 'oneOf'] as const) {
    const alternatives = schema[key];
    if (Array.isArray(alternatives)) for (const alt of alternatives) if (isObject(alt) && typeof alt['type'] === 'string') out.add(alt['type']);
  }
  if (schema['nullable'] === true) out.add('null');
  return out;
}

/** Follows `#/...` references inside the same schema, a few hops at most (cycles end there). */
function resolveLocalRef(schema: Schema, root: Schema): Schema {
  let current = schema;
  for (let hops = 0; hops < 8 && typeof current['$ref'] === 'string'; hops++) {
    const ref = current['$ref'];
    if (!ref.startsWith('#/')) return current;
    let target: unknown = root;
    for (const part of ref.slice(2).split('/')) {
      const key = part.replace(/~1/g, '/').replace(/~0/g, '~');
      target = isObject(target) && Object.prototype.hasOwnProperty.call(target, key) ? target[key] : undefined;
    }
    if (!isObject(target)) return current;
    current = target;
  }
  return current;
}


function truncate(s: string): string {
  return s.length > 20 ? `${s.slice(0, 17)}…` : s;
}
