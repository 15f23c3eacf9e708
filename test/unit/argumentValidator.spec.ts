import assert from 'node:assert/strict';
import {
  COMPILES_PER_ENGINE,
  MAX_CACHED_VALIDATORS,
  MAX_ENUM_VALUES,
  MAX_SCHEMA_BYTES,
  SchemaCompiler,
  describeIssues,
  hasNestedQuantifier,
  formatErrors,
  type ArgumentCheck,
  type ValidationIssue,
} from '../../src/core/schema/argumentValidator';

const DRAFT_07 = 'http://json-schema.org/draft-07/schema#';
const DRAFT_04 = 'http://json-schema.org/draft-04/schema#';
const DRAFT_2019 = 'https://json-schema.org/draft/2019-09/schema';
const DRAFT_2020 = 'https://json-schema.org/draft/2020-12/schema';

function compileOk(compiler: SchemaCompiler, schema: unknown): ArgumentCheck {
  const result = compiler.compile(schema);
  assert.ok(result.ok, `expected the schema to compile, got: ${result.ok ? '' : result.reason}`);
  return result.validate;
}

function compileFails(compiler: SchemaCompiler, schema: unknown): string {
  const result = compiler.compile(schema);
  assert.ok(!result.ok, 'expected the schema to be refused');
  return result.reason;
}

function paths(issues: readonly ValidationIssue[]): string[] {
  return issues.map((i) => i.path);
}

describe('argumentValidator', function () {
  // Compiling large schemas (a 10,000-value enum) can be slow on a busy machine; nothing here measures time.
  this.timeout(20_000);
  let compiler: SchemaCompiler;
  beforeEach(() => {
    compiler = new SchemaCompiler();
  });

  describe('SchemaCompiler: drafts', () => {
    it('checks a schema without $schema (draft-07 rules)', () => {
      const validate = compileOk(compiler, { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] });
      assert.deepEqual(validate({ q: 'x' }), []);
      assert.deepEqual(validate({}), [{ path: '/q', message: 'is required but missing' }]);
    });

    it('checks a draft-07 schema, including draft-07-only keywords such as dependencies', () => {
      const validate = compileOk(compiler, {
        $schema: DRAFT_07,
        type: 'object',
        properties: { card: { type: 'string' }, billing: { type: 'string' } },
        dependencies: { card: ['billing'] },
      });
      assert.deepEqual(validate({}), []);
      assert.deepEqual(validate({ card: '4111', billing: 'addr' }), []);
      assert.deepEqual(paths(validate({ card: '4111' })), ['/']);
    });

    it('checks a draft-04 schema with draft-07 rules', () => {
      const validate = compileOk(compiler, { $schema: DRAFT_04, type: 'object', properties: { n: { type: 'integer' } } });
      assert.deepEqual(validate({ n: 1 }), []);
      assert.deepEqual(validate({ n: 'x' }), [{ path: '/n', message: 'must be integer' }]);
    });

    it('checks a 2019-09 schema with 2019-09 keywords (dependentRequired, unevaluatedProperties)', () => {
      const validate = compileOk(compiler, {
        $schema: DRAFT_2019,
        type: 'object',
        properties: { card: { type: 'string' }, billing: { type: 'string' } },
        dependentRequired: { card: ['billing'] },
        unevaluatedProperties: false,
      });
      assert.deepEqual(validate({ card: '4111', billing: 'addr' }), []);
      const [missing, ...rest] = validate({ card: '4111' });
      assert.deepEqual(rest, []);
      assert.equal(missing!.path, '/');
      assert.match(missing!.message, /billing/);
      assert.equal(validate({ card: '4111', billing: 'addr', extra: 1 }).length, 1);
    });

    it('checks a 2020-12 schema with 2020-12 keywords (prefixItems)', () => {
      const validate = compileOk(compiler, {
        $schema: DRAFT_2020,
        type: 'object',
        properties: { point: { type: 'array', prefixItems: [{ type: 'number' }, { type: 'number' }], items: false } },
      });
      assert.deepEqual(validate({ point: [1, 2] }), []);
      assert.deepEqual(paths(validate({ point: [1, 'two'] })), ['/point/1']);
      assert.equal(validate({ point: [1, 2, 3] }).length, 1);
    });

    it('accepts the 2020-12 $schema URI with a trailing #', () => {
      const validate = compileOk(compiler, { $schema: `${DRAFT_2020}#`, type: 'object', properties: { t: { type: 'array', prefixItems: [{ type: 'string' }] } } });
      assert.deepEqual(paths(validate({ t: [1] })), ['/t/0']);
    });

    it('does not modify the schema it is given', () => {
      const schema = { $schema: DRAFT_07, $id: 'https://example.com/tool', properties: { a: { type: 'string' } } };
      const copy = structuredClone(schema);
      compileOk(compiler, schema);
      assert.deepEqual(schema, copy);
    });

    it('compiles two tools that declare the same $id, each with its own rules', () => {
      const a = compileOk(compiler, { $id: 'https://example.com/same', type: 'object', properties: { v: { type: 'string' } } });
      const b = compileOk(compiler, { $id: 'https://example.com/same', type: 'object', properties: { v: { type: 'number' } } });
      assert.deepEqual(a({ v: 'x' }), []);
      assert.deepEqual(b({ v: 1 }), []);
      assert.deepEqual(paths(a({ v: 1 })), ['/v']);
      assert.deepEqual(paths(b({ v: 'x' })), ['/v']);
    });

    it('treats a schema with properties but no type as an object schema', () => {
      const validate = compileOk(compiler, { properties: { a: { type: 'string' } } });
      assert.deepEqual(validate('not an object'), [{ path: '/', message: 'must be object' }]);
    });
  });

  describe('SchemaCompiler: schemas that fail closed', () => {
    it('refuses $ref cycles that never reach a type, with a reason (found by test:reliability)', () => {
      assert.match(compileFails(compiler, { $ref: '#' }), /\$ref cycle/);
      const pair = { type: 'object', properties: { a: { $ref: '#/definitions/x' } }, definitions: { x: { $ref: '#/definitions/y' }, y: { $ref: '#/definitions/x' } } };
      assert.match(compileFails(compiler, pair), /\$ref cycle/);
      // A recursive tree is a legitimate schema and still compiles.
      assert.deepEqual(compileOk(compiler, { type: 'object', properties: { child: { $ref: '#' } } })({ child: { child: {} } }), []);
    });

    it('refuses patterns with nested quantifiers, which can backtrack for seconds (found by test:reliability)', () => {
      assert.match(compileFails(compiler, { type: 'object', properties: { a: { type: 'string', pattern: '^(a+)+$' } } }), /nested quantifier at \/properties\/a\/pattern/);
      assert.match(compileFails(compiler, { type: 'object', patternProperties: { '^(\\w*\\s?)*$': {} } }), /nested quantifier/);
      for (const bad of ['(a+)+', '(a*)*', '((ab)+c)*', '(x+y){2,}', '(?:\\d+)+']) assert.ok(hasNestedQuantifier(bad), bad);
      for (const fine of ['^[a-z]+$', '(ab)+', '^\\d{3}-\\d{4}$', '([+*])+', '\\(a+\\)+', '(a+)?', '^(https?://)?[^ ]+$']) assert.ok(!hasNestedQuantifier(fine), fine);
    });

    it('refuses a missing schema', () => {
      assert.match(compileFails(compiler, undefined), /no input schema/);
      assert.match(compileFails(compiler, null), /no input schema/);
    });

    it('refuses a schema that is not an object and names what it is', () => {
      assert.match(compileFails(compiler, 'object'), /is string, not an object/);
      assert.match(compileFails(compiler, 42), /is number, not an object/);
      assert.match(compileFails(compiler, true), /is boolean, not an object/);
      assert.match(compileFails(compiler, [{ type: 'object' }]), /is an array, not an object/);
    });

    it('refuses a schema object with a cycle', () => {
      const schema: Record<string, unknown> = { type: 'object' };
      schema['self'] = schema;
      assert.match(compileFails(compiler, schema), /cycle/);
    });

    it(`refuses a schema larger than MAX_SCHEMA_BYTES (${MAX_SCHEMA_BYTES})`, () => {
      const schema = { type: 'object', description: 'x'.repeat(MAX_SCHEMA_BYTES) };
      assert.match(compileFails(compiler, schema), /above the \d+-byte limit/);
    });

    it('refuses a remote $ref without fetching it', async () => {
      const original = globalThis.fetch;
      let fetched = 0;
      globalThis.fetch = (async () => {
        fetched++;
        throw new Error('no network in unit tests');
      }) as typeof fetch;
      try {
        const reason = compileFails(compiler, { type: 'object', properties: { a: { $ref: 'https://example.com/schemas/a.json' } } });
        assert.match(reason, /remote schema/);
        assert.match(reason, /\/properties\/a\/\$ref = https:\/\/example\.com\/schemas\/a\.json/);
        await new Promise((resolve) => setImmediate(resolve));
        assert.equal(fetched, 0);
      } finally {
        globalThis.fetch = original;
      }
    });

    it('refuses relative file references and remote $dynamicRef / $recursiveRef', () => {
      assert.match(compileFails(compiler, { type: 'object', properties: { a: { $ref: 'other.json#/defs/a' } } }), /remote/);
      assert.match(compileFails(compiler, { $schema: DRAFT_2020, type: 'object', items: [{ $dynamicRef: 'https://example.com/x' }] }), /remote/);
      assert.match(compileFails(compiler, { $schema: DRAFT_2019, type: 'object', properties: { a: { $recursiveRef: 'https://example.com/x' } } }), /remote/);
    });

    it('refuses a pattern that is not a valid regular expression and says why', () => {
      const reason = compileFails(compiler, { type: 'object', properties: { a: { type: 'string', pattern: '([a-z' } } });
      assert.match(reason, /does not compile/);
      assert.match(reason, /Invalid regular expression/);
    });

    it('refuses an invalid regular expression in patternProperties', () => {
      assert.match(compileFails(compiler, { type: 'object', patternProperties: { '(': { type: 'string' } } }), /does not compile/);
    });

    it('refuses a schema that breaks its meta-schema (type "objekt")', () => {
      assert.match(compileFails(compiler, { type: 'objekt' }), /schema is invalid/);
    });

    it(`refuses an enum with more than MAX_ENUM_VALUES (${MAX_ENUM_VALUES}) values and says where`, () => {
      const values = Array.from({ length: MAX_ENUM_VALUES + 1 }, (_, i) => `v${i}`);
      const reason = compileFails(compiler, { type: 'object', properties: { color: { enum: values } } });
      assert.match(reason, /more than 10000 values at \/properties\/color\/enum/);
    });

    it('accepts an enum of exactly MAX_ENUM_VALUES values', () => {
      const values = Array.from({ length: MAX_ENUM_VALUES }, (_, i) => `v${i}`);
      const validate = compileOk(compiler, { type: 'object', properties: { color: { enum: values } } });
      assert.deepEqual(validate({ color: 'v9999' }), []);
      assert.equal(validate({ color: 'nope' }).length, 1);
    });
  });

  describe('SchemaCompiler: local references', () => {
    const tree = {
      type: 'object',
      properties: { root: { $ref: '#/definitions/node' } },
      required: ['root'],
      definitions: {
        node: {
          type: 'object',
          properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/definitions/node' } } },
          required: ['name'],
        },
      },
    };

    it('compiles a recursive local $ref and validates deep values', () => {
      const validate = compileOk(compiler, tree);
      assert.deepEqual(validate({ root: { name: 'a', children: [{ name: 'b', children: [{ name: 'c' }] }] } }), []);
      assert.deepEqual(validate({ root: { name: 'a', children: [{ name: 'b', children: [{ name: 3 }] }] } }), [
        { path: '/root/children/0/children/0/name', message: 'must be string' },
      ]);
    });

    it('compiles a recursive $ref into $defs in a 2020-12 schema', () => {
      const validate = compileOk(compiler, {
        $schema: DRAFT_2020,
        type: 'object',
        properties: { list: { $ref: '#/$defs/cell' } },
        $defs: { cell: { type: 'object', properties: { value: { type: 'integer' }, next: { $ref: '#/$defs/cell' } } } },
      });
      assert.deepEqual(validate({ list: { value: 1, next: { value: 2, next: { value: 3 } } } }), []);
      assert.deepEqual(paths(validate({ list: { value: 1, next: { value: 'two' } } })), ['/list/next/value']);
    });

    it('keeps plain-name anchors that local references point at', () => {
      const validate = compileOk(compiler, { type: 'object', properties: { n: { $ref: '#num' } }, definitions: { num: { $id: '#num', type: 'number' } } });
      assert.deepEqual(paths(validate({ n: 'x' })), ['/n']);
    });
  });

  describe('SchemaCompiler: formats', () => {
    it('checks "email"', () => {
      const validate = compileOk(compiler, { type: 'object', properties: { email: { type: 'string', format: 'email' } } });
      assert.deepEqual(validate({ email: 'someone@example.com' }), []);
      assert.deepEqual(validate({ email: 'not an address' }), [{ path: '/email', message: 'must match format "email"' }]);
    });

    it('checks "date-time" and "uri" in a 2020-12 schema', () => {
      const validate = compileOk(compiler, {
        $schema: DRAFT_2020,
        type: 'object',
        properties: { at: { type: 'string', format: 'date-time' }, link: { type: 'string', format: 'uri' } },
      });
      assert.deepEqual(validate({ at: '2024-05-01T10:00:00Z', link: 'https://example.com/x' }), []);
      assert.deepEqual(paths(validate({ at: 'yesterday', link: 'not a uri' })).sort(), ['/at', '/link']);
    });

    it('ignores formats it does not know instead of refusing the schema', () => {
      const warn = console.warn;
      console.warn = () => undefined; // Ajv warns about the unknown format on the console.
      try {
        const validate = compileOk(compiler, { type: 'object', properties: { a: { type: 'string', format: 'x-custom-id' } } });
        assert.deepEqual(validate({ a: 'anything' }), []);
      } finally {
        console.warn = warn;
      }
    });
  });

  describe('issues', () => {
    const schema = {
      type: 'object',
      properties: {
        name: { type: 'string' },
        age: { type: 'integer' },
        role: { enum: ['admin', 'user'] },
        address: { type: 'object', properties: { zip: { type: 'string' } }, required: ['zip'] },
      },
      required: ['name'],
      additionalProperties: false,
    };

    it('returns no issues for valid arguments', () => {
      assert.deepEqual(compileOk(compiler, schema)({ name: 'Ada', age: 36, role: 'admin', address: { zip: '12345' } }), []);
    });

    it('lists every failing path: required, type, enum, additionalProperties, nested required', () => {
      const issues = compileOk(compiler, schema)({ age: 'old', role: 'root', extra: true, address: {} });
      const byPath = new Map(issues.map((i) => [i.path, i.message]));
      assert.equal(byPath.get('/name'), 'is required but missing');
      assert.equal(byPath.get('/age'), 'must be integer');
      assert.equal(byPath.get('/role'), 'must be one of "admin", "user"');
      assert.equal(byPath.get('/extra'), 'is not an allowed property');
      assert.equal(byPath.get('/address/zip'), 'is required but missing');
      assert.equal(issues.length, 5);
    });

    it('reports a wrong root type at "/"', () => {
      assert.deepEqual(compileOk(compiler, schema)([]), [{ path: '/', message: 'must be object' }]);
    });

    it('lists the first ten allowed values of a long enum, then an ellipsis', () => {
      const values = Array.from({ length: 12 }, (_, i) => i);
      const [issue] = compileOk(compiler, { type: 'object', properties: { n: { enum: values } } })({ n: 99 });
      assert.equal(issue!.message, 'must be one of 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, …');
    });

    it('reports at most 20 issues', () => {
      const required = Array.from({ length: 30 }, (_, i) => `p${i}`);
      const issues = compileOk(compiler, { type: 'object', required })({});
      assert.equal(issues.length, 20);
      assert.deepEqual(paths(issues), required.slice(0, 20).map((p) => `/${p}`));
    });

    it('formatErrors drops duplicate (path, message) pairs', () => {
      const error = { keyword: 'type', instancePath: '/a', schemaPath: '#/properties/a/type', params: { type: 'string' }, message: 'must be string' };
      assert.deepEqual(formatErrors([error, { ...error, schemaPath: '#/anyOf/0' }]), [{ path: '/a', message: 'must be string' }]);
    });

    it('describeIssues joins issues as "path: message"', () => {
      assert.equal(
        describeIssues([
          { path: '/a', message: 'must be string' },
          { path: '/b', message: 'is required but missing' },
        ]),
        '/a: must be string; /b: is required but missing',
      );
      assert.equal(describeIssues([]), '');
    });
  });
});

describe('SchemaCompiler reuse and engine retirement', function () {
  // Some cases compile hundreds to a thousand schemas (~0.6 s idle); a loaded two-core machine is several times slower.
  this.timeout(20_000);
  it('compiles an identical schema once and gives every tool the same answers', () => {
    const compiler = new SchemaCompiler();
    const schema = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };
    const first = compileOk(compiler, schema);
    const second = compileOk(compiler, JSON.parse(JSON.stringify(schema)));
    assert.equal(compiler.stats.cacheHits, 1);
    assert.deepEqual(first({ n: 1 }), []);
    assert.deepEqual(paths(second({})), ['/n']);
  });

  it('remembers a refusal too, with its reason', () => {
    const compiler = new SchemaCompiler();
    const hostile = { type: 'object', properties: { a: { $ref: 'https://example.invalid/s.json' } } };
    const reason = compileFails(compiler, hostile);
    assert.equal(compileFails(compiler, hostile), reason);
    assert.equal(compiler.stats.cacheHits, 1);
  });

  it('retires its engines after COMPILES_PER_ENGINE compilations and old validators keep working', () => {
    const compiler = new SchemaCompiler();
    const early = compileOk(compiler, { type: 'object', properties: { p0: { type: 'string', pattern: '^a' } } });
    for (let i = 1; i <= COMPILES_PER_ENGINE + 5; i++) compileOk(compiler, { type: 'object', properties: { [`p${i}`]: { type: 'string' } } });
    assert.equal(compiler.stats.enginesRetired, 1);
    assert.deepEqual(early({ p0: 'abc' }), []);
    assert.deepEqual(paths(early({ p0: 'b' })), ['/p0']);
    const late = compileOk(compiler, { $schema: DRAFT_2020, type: 'object', properties: { q: { type: 'number' } } });
    assert.deepEqual(paths(late({ q: 'x' })), ['/q']);
  });

  it('keeps at most MAX_CACHED_VALIDATORS schemas, dropping the least recently used', () => {
    const compiler = new SchemaCompiler();
    const schemaN = (i: number): object => ({ type: 'object', properties: { [`k${i}`]: { type: 'string' } } });
    for (let i = 0; i < MAX_CACHED_VALIDATORS; i++) compileOk(compiler, schemaN(i));
    compileOk(compiler, schemaN(0)); // touch 0: now the most recent
    compileOk(compiler, schemaN(MAX_CACHED_VALIDATORS)); // evicts 1
    const hits = compiler.stats.cacheHits;
    compileOk(compiler, schemaN(0));
    assert.equal(compiler.stats.cacheHits, hits + 1);
    compileOk(compiler, schemaN(1));
    assert.equal(compiler.stats.cacheHits, hits + 1, 'schema 1 was evicted, so it compiles again');
  });
});
