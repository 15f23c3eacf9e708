import { createHash } from 'node:crypto';
import Ajv, { type AnySchema, type ErrorObject, type ValidateFunction } from 'ajv';
import Ajv2019 from 'ajv/dist/2019';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { describeError } from '../errors/describeError';

/**
 * Compiles each tool's input schema once and validates arguments against it. The router compiles when a
 * schema is first needed (see toolValidators.ts); `precheckSchema` gives the cheap refusals at once.
 *
 * - Draft-07 (and schemas with no `$schema`) use Ajv's default engine; 2019-09 and 2020-12 use theirs.
 * - Remote `$ref` is never fetched: Ajv is given no loader, so an unresolved reference fails to compile.
 * - A schema that does not compile yields a {@link SchemaProblem}; the router then fails the tool closed.
 * - The canonical schema is never modified: it is what the model sees.
 */

export interface ValidationIssue {
  /** JSON-pointer-like path into the arguments, `/` for the root. */
  readonly path: string;
  readonly message: string;
}

export type ArgumentCheck = (args: unknown) => ValidationIssue[];

export interface CompiledSchema {
  readonly ok: true;
  readonly validate: ArgumentCheck;
}

export interface SchemaProblem {
  readonly ok: false;
  readonly reason: string;
}

/**
 * Beyond this many enum values a schema is hostile or generated carelessly; compiling it is refused so
 * a single tool cannot stall discovery.
 */
export const MAX_ENUM_VALUES = 10_000;
/** A schema bigger than this (serialised) is refused for the same reason. */
export const MAX_SCHEMA_BYTES = 512 * 1024;
/** Error lists are cut here: the model gets the first problems, not a wall of text. */
const MAX_REPORTED_ISSUES = 20;

const DRAFT_2020 = 'https://json-schema.org/draft/2020-12/schema';
const DRAFT_2019 = 'https://json-schema.org/draft/2019-09/schema';

type AjvLike = Pick<Ajv, 'compile' | 'removeSchema'>;

function makeEngine<T extends Ajv>(Ctor: new (opts: object) => T): T {
  const ajv = new Ctor({
    allErrors: true,
    // Real MCP servers emit schemas with keywords Ajv does not know ("example", "x-..."); strict mode would refuse them.
    strict: false,
    validateSchema: true,
    // Formats are checked where ajv-formats knows them; unknown formats are ignored, not fatal.
    validateFormats: true,
    unicodeRegExp: true,
    // Ajv would print "unknown format ignored" to the console; problems reach the user through the router instead.
    logger: false,
    // No loadSchema: remote references are never resolved.
  });
  addFormats(ajv as unknown as Parameters<typeof addFormats>[0]);
  return ajv;
}

/**
 * Compiled validators kept by schema text. Servers restart and re-list the same tools, and many tools
 * share one schema: each is compiled once. 1,000 covers the 128-tool client cap many times over.
 */
export const MAX_CACHED_VALIDATORS = 1000;
/**
 * Ajv keeps every function it compiles in its engine's scope, with no way to drop one, so an engine is
 * replaced after this many compilations; a retired engine is freed once no live tool holds its validators,
 * so servers whose tools come and go cannot grow the heap. Building the engines is cheap at this interval.
 */
export const COMPILES_PER_ENGINE = 200;

interface Engines {
  readonly draft07: AjvLike;
  readonly draft2019: AjvLike;
  readonly draft2020: AjvLike;
}

function makeEngines(): Engines {
  return {
    draft07: makeEngine(Ajv),
    draft2019: makeEngine(Ajv2019 as unknown as new (opts: object) => Ajv),
    draft2020: makeEngine(Ajv2020 as unknown as new (opts: object) => Ajv),
  };
}

export class SchemaCompiler {
  private engines = makeEngines();
  private compilesOnEngine = 0;
  /**
   * sha256 of the schema text → its outcome (compiled or refused), least recently used first. Keyed by
   * digest, not text: 1,000 schemas of up to MAX_SCHEMA_BYTES each would otherwise be kept as keys.
   */
  private readonly cache = new Map<string, CompiledSchema | SchemaProblem>();

  /** Compilations done, compilations the cache saved, and engines retired: for tests and figures. */
  readonly stats = { compiles: 0, cacheHits: 0, enginesRetired: 0 };

  compile(schema: unknown): CompiledSchema | SchemaProblem {
    const shape = checkShape(schema);
    if (typeof shape !== 'string') return shape;
    const key = createHash('sha256').update(shape).digest('hex');
    const cached = this.cache.get(key);
    if (cached) {
      this.cache.delete(key);
      this.cache.set(key, cached);
      this.stats.cacheHits++;
      return cached;
    }
    const outcome = this.compileText(schema as object, shape);
    this.cache.set(key, outcome);
    if (this.cache.size > MAX_CACHED_VALIDATORS) this.cache.delete(this.cache.keys().next().value as string);
    return outcome;
  }

  private compileText(schema: object, serialised: string): CompiledSchema | SchemaProblem {
    this.stats.compiles++;
    if (++this.compilesOnEngine > COMPILES_PER_ENGINE) {
      this.engines = makeEngines();
      this.compilesOnEngine = 1;
      this.stats.enginesRetired++;
    }
    const refused = contentProblem(schema);
    if (refused) return refused;

    const copy = JSON.parse(serialised) as Record<string, unknown>;
    const declared = typeof copy['$schema'] === 'string' ? copy['$schema'].replace(/#$/, '') : undefined;
    let engine: AjvLike = this.engines.draft07;
    if (declared === DRAFT_2020) engine = this.engines.draft2020;
    else if (declared === DRAFT_2019) engine = this.engines.draft2019;
    else if (declared !== undefined) delete copy['$schema']; // draft-04/06/07 variants: checked with draft-07 rules
    // `$id`s would be registered globally in the engine and clash between tools; validation needs none.
    stripIds(copy, 0);
    if (copy['type'] === undefined && copy['properties'] !== undefined) copy['type'] = 'object';

    let validate: ValidateFunction;
    try {
      validate = engine.compile(copy as AnySchema);
    } catch (error) {
      forget(engine, copy);
      if (error instanceof RangeError) return { ok: false, reason: `the input schema has a $ref cycle that never reaches a type (${error.message})` };
      return { ok: false, reason: `the input schema does not compile: ${describeError(error)}` };
    }
    // A schema that is only references to itself ({"$ref": "#"}) compiles, then recurses forever on any value.
    // The validator keeps what it needs; Ajv's own cache would otherwise keep every schema ever compiled,
    // and servers whose tools come and go would grow the heap without end.
    forget(engine, copy);
    try {
      validate({});
    } catch (error) {
      if (error instanceof RangeError) return { ok: false, reason: `the input schema has a $ref cycle that never reaches a type (${error.message})` };
    }
    return {
      ok: true,
      validate: (args) => {
        try {
          if (validate(args)) return [];
          return formatErrors(validate.errors ?? []);
        } catch (error) {
          // A pattern can be valid for the compiler and still blow up at run time (e.g. catastrophic regex limits).
          return [{ path: '/', message: `the arguments could not be checked: ${describeError(error)}` }];
        }
      },
    };
  }
}

/**
 * The refusals that need no compiler (no schema, not an object, a cycle, too big, an enum too long, a
 * remote `$ref`, a nested quantifier): cheap enough to run on every tool when the catalogue is built.
 * A schema that passes may still fail to compile.
 */
export function precheckSchema(schema: unknown): SchemaProblem | undefined {
  const shape = checkShape(schema);
  return typeof shape === 'string' ? contentProblem(schema as object) : shape;
}

/** The schema's text when it is an object that serialises within the size limit; otherwise why not. */
function checkShape(schema: unknown): string | SchemaProblem {
  if (schema === undefined || schema === null) return { ok: false, reason: 'the tool has no input schema' };
  if (typeof schema !== 'object' || Array.isArray(schema)) return { ok: false, reason: `the input schema is ${Array.isArray(schema) ? 'an array' : typeof schema}, not an object` };
  let serialised: string;
  try {
    serialised = JSON.stringify(schema);
  } catch {
    return { ok: false, reason: 'the input schema cannot be serialised (it contains a cycle)' };
  }
  if (serialised.length > MAX_SCHEMA_BYTES) return { ok: false, reason: `the input schema is ${serialised.length} bytes, above the ${MAX_SCHEMA_BYTES}-byte limit` };
  return serialised;
}

function contentProblem(schema: object): SchemaProblem | undefined {
  const tooLongEnum = findLongEnum(schema, 0);
  if (tooLongEnum) return { ok: false, reason: `the input schema has an enum with more than ${MAX_ENUM_VALUES} values at ${tooLongEnum}` };
  const remote = findRemoteRef(schema, '', 0);
  if (remote) return { ok: false, reason: `the input schema refers to a remote schema (${remote}); remote $ref is never fetched` };
  const nested = findNestedQuantifier(schema, '', 0);
  if (nested) return { ok: false, reason: `the input schema has a pattern with a nested quantifier at ${nested}, which can take exponential time on some strings (catastrophic backtracking)` };
  return undefined;
}

function forget(engine: AjvLike, schema: object): void {
  try {
    engine.removeSchema(schema as AnySchema);
  } catch {
    // Nothing to forget (the schema never made it into the cache).
  }
}

export function formatErrors(errors: readonly ErrorObject[]): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    let p = e.instancePath || '/';
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'required' && typeof e.params['missingProperty'] === 'string') {
      p = `${e.instancePath}/${e.params['missingProperty']}`;
      message = 'is required but missing';
    } else if (e.keyword === 'additionalProperties' && typeof e.params['additionalProperty'] === 'string') {
      p = `${e.instancePath}/${e.params['additionalProperty']}`;
      message = 'is not an allowed property';
    } else if (e.keyword === 'enum' && Array.isArray(e.params['allowedValues'])) {
      const allowed = (e.params['allowedValues'] as unknown[]).slice(0, 10).map((v) => JSON.stringify(v)).join(', ');
      message = `must be one of ${allowed}${(e.params['allowedValues'] as unknown[]).length > 10 ? ', …' : ''}`;
    }
    const key = `${p}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ path: p, message });
    if (out.length >= MAX_REPORTED_ISSUES) break;
  }
  return out;
}

export function describeIssues(issues: readonly ValidationIssue[]): string {
  return issues.map((i) => `${i.path}: ${i.message}`).join('; ');
}

/** Nesting beyond this is treated as hostile; the walkers stop and the compiler decides. */
const MAX_WALK_DEPTH = 64;

function findRemoteRef(node: unknown, at: string, depth: number): string | undefined {
  if (depth > MAX_WALK_DEPTH || typeof node !== 'object' || node === null) return undefined;
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      const hit = findRemoteRef(node[i], `${at}/${i}`, depth + 1);
      if (hit) return hit;
    }
    return undefined;
  }
  for (const [k, v] of Object.entries(node)) {
    if ((k === '$ref' || k === '$dynamicRef' || k === '$recursiveRef') && typeof v === 'string' && !v.startsWith('#')) return `${at}/${k} = ${v.slice(0, 120)}`;
    const hit = findRemoteRef(v, `${at}/${k}`, depth + 1);
    if (hit) return hit;
  }
  return undefined;
}

/** `pattern` strings and `patternProperties` keys whose regex nests one unbounded quantifier in another. */
function findNestedQuantifier(node: unknown, at: string, depth: number): string | undefined {
  if (depth > MAX_WALK_DEPTH || typeof node !== 'object' || node === null) return undefined;
  for (const [k, v] of Object.entries(node)) {
    if (k === 'pattern' && typeof v === 'string' && hasNestedQuantifier(v)) return `${at}/pattern = ${JSON.stringify(v.slice(0, 80))}`;
    if (k === 'patternProperties' && typeof v === 'object' && v !== null) {
      for (const key of Object.keys(v)) if (hasNestedQuantifier(key)) return `${at}/patternProperties/${JSON.stringify(key.slice(0, 80))}`;
    }
    const hit = findNestedQuantifier(v, `${at}/${k}`, depth + 1);
    if (hit) return hit;
  }
  return undefined;
}

/**
 * True for `(a+)+`, `(\w*\s?)*`, `((ab)+c)*`: a group holding an unbounded quantifier that is itself
 * repeated without bound. This is the shape behind most regex denial of service; JavaScript's engine has
 * no time limit, so one such pattern and one crafted argument would freeze the extension host.
 */
export function hasNestedQuantifier(pattern: string): boolean {
  const groups: boolean[] = [];
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') inClass = true;
    else if (c === '(') groups.push(false);
    else if (c === ')') {
      const inner = groups.pop() ?? false;
      const next = pattern[i + 1];
      const repeated = next === '+' || next === '*' || (next === '{' && /^\{\d*,\}/.test(pattern.slice(i + 1)));
      if (inner && repeated) return true;
      if ((inner || repeated) && groups.length > 0) groups[groups.length - 1] = true;
    } else if ((c === '+' || c === '*' || (c === '{' && /^\{\d*,\}/.test(pattern.slice(i)))) && groups.length > 0) {
      groups[groups.length - 1] = true;
    }
  }
  return false;
}

function findLongEnum(node: unknown, depth: number): string | undefined {
  if (depth > MAX_WALK_DEPTH || typeof node !== 'object' || node === null) return undefined;
  for (const [k, v] of Object.entries(node)) {
    if (k === 'enum' && Array.isArray(v) && v.length > MAX_ENUM_VALUES) return `/${k}`;
    const hit = findLongEnum(v, depth + 1);
    if (hit) return `/${k}${hit}`;
  }
  return undefined;
}

function stripIds(node: unknown, depth: number): void {
  if (depth > MAX_WALK_DEPTH || typeof node !== 'object' || node === null) return;
  if (!Array.isArray(node)) {
    const obj = node as Record<string, unknown>;
    // Only schema-level $id strings; a property literally named "$id" sits under "properties" and is an object.
    // Plain-name anchors ("#foo") are kept: local `$ref`s may point at them.
    if (typeof obj['$id'] === 'string' && !obj['$id'].startsWith('#')) delete obj['$id'];
  }
  for (const v of Object.values(node)) stripIds(v, depth + 1);
}
