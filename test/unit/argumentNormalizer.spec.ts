import assert from 'node:assert/strict';
import { MAX_ARGUMENT_DEPTH, normalizeArguments, parseArguments } from '../../src/core/schema/argumentNormalizer';

function objectSchema(properties: Record<string, unknown>, required: string[] = []): Record<string, unknown> {
  return { type: 'object', properties, required };
}

function parsedValue(raw: unknown): Record<string, unknown> {
  const parsed = parseArguments(raw);
  assert.ok(parsed.ok, `expected ${JSON.stringify(raw)} to parse`);
  return parsed.value;
}

function parseFailure(raw: unknown): string {
  const parsed = parseArguments(raw);
  assert.ok(!parsed.ok, `expected ${JSON.stringify(raw)} to be refused`);
  return parsed.message;
}

describe('argumentNormalizer', () => {
  describe('parseArguments', () => {
    it('treats missing arguments (undefined, null) as an empty object', () => {
      assert.deepEqual(parsedValue(undefined), {});
      assert.deepEqual(parsedValue(null), {});
    });

    it('passes an object through', () => {
      assert.deepEqual(parsedValue({ a: 1, b: { c: [1, 2] } }), { a: 1, b: { c: [1, 2] } });
    });

    it('parses an object sent as a JSON string, surrounding whitespace included', () => {
      assert.deepEqual(parsedValue('{"query": "mcp", "limit": 5}'), { query: 'mcp', limit: 5 });
      assert.deepEqual(parsedValue('  \n {"a": true}\t '), { a: true });
    });

    it('treats an empty or blank string as an empty object', () => {
      assert.deepEqual(parsedValue(''), {});
      assert.deepEqual(parsedValue('   \n'), {});
    });

    it('refuses a string that is not valid JSON and says to send a JSON object', () => {
      const message = parseFailure('{"a": 1,');
      assert.match(message, /not valid JSON/);
      assert.match(message, /send a JSON object/);
    });

    it('refuses arrays, whether sent as a value or as a JSON string', () => {
      assert.match(parseFailure([1, 2]), /must be a JSON object, got an array/);
      assert.match(parseFailure('[{"a": 1}]'), /got an array/);
    });

    it('refuses the JSON string "null"', () => {
      assert.match(parseFailure('null'), /got null/);
    });

    it('refuses other non-object values and names their type', () => {
      assert.match(parseFailure(42), /got number/);
      assert.match(parseFailure('42'), /got number/);
      assert.match(parseFailure(true), /got boolean/);
      assert.match(parseFailure('"text"'), /got string/);
    });
  });

  describe('normalizeArguments', () => {
    describe('booleans', () => {
      const schema = objectSchema({ flag: { type: 'boolean' }, label: { type: 'string' }, either: { type: ['boolean', 'string'] } });

      it('turns "true" and "false" into booleans where the schema says boolean', () => {
        assert.deepEqual(normalizeArguments({ flag: 'true' }, schema), { value: { flag: true }, changes: ['/flag: "true" → true'] });
        assert.deepEqual(normalizeArguments({ flag: 'false' }, schema), { value: { flag: false }, changes: ['/flag: "false" → false'] });
      });

      it('leaves "true" alone in a string property', () => {
        assert.deepEqual(normalizeArguments({ label: 'true' }, schema), { value: { label: 'true' }, changes: [] });
      });

      it('leaves "true" alone where the schema allows both boolean and string', () => {
        assert.deepEqual(normalizeArguments({ either: 'true' }, schema), { value: { either: 'true' }, changes: [] });
      });

      it('converts only the exact lowercase words', () => {
        for (const s of ['TRUE', 'True', 'yes', '1', ' true']) assert.deepEqual(normalizeArguments({ flag: s }, schema).value, { flag: s }, s);
      });

      it('leaves properties the schema does not describe alone', () => {
        assert.deepEqual(normalizeArguments({ other: 'true' }, schema), { value: { other: 'true' }, changes: [] });
      });
    });

    describe('numbers', () => {
      const schema = objectSchema({
        n: { type: 'number' },
        i: { type: 'integer' },
        s: { type: 'string' },
        maybe: { anyOf: [{ type: 'number' }, { type: 'null' }] },
        numOrString: { type: ['number', 'string'] },
      });

      it('turns numeric strings into numbers for number properties', () => {
        const cases: Array<[string, number]> = [
          ['5', 5],
          ['-2.5', -2.5],
          [' 7 ', 7],
          ['1e3', 1000],
          ['.5', 0.5],
          ['3.', 3],
          ['-0.25E-2', -0.0025],
        ];
        for (const [raw, expected] of cases) assert.deepEqual(normalizeArguments({ n: raw }, schema).value, { n: expected }, raw);
      });

      it('reports each conversion', () => {
        assert.deepEqual(normalizeArguments({ n: '5' }, schema).changes, ['/n: "5" → 5']);
      });

      it('turns whole-number strings into numbers for integer properties', () => {
        assert.deepEqual(normalizeArguments({ i: '42' }, schema), { value: { i: 42 }, changes: ['/i: "42" → 42'] });
        assert.deepEqual(normalizeArguments({ i: '2.0' }, schema).value, { i: 2 });
        assert.deepEqual(normalizeArguments({ i: '-7' }, schema).value, { i: -7 });
      });

      it('refuses to turn "1.5" into an integer', () => {
        assert.deepEqual(normalizeArguments({ i: '1.5' }, schema), { value: { i: '1.5' }, changes: [] });
      });

      it('leaves numeric strings alone in string properties and where string is allowed', () => {
        assert.deepEqual(normalizeArguments({ s: '5' }, schema), { value: { s: '5' }, changes: [] });
        assert.deepEqual(normalizeArguments({ numOrString: '5' }, schema), { value: { numOrString: '5' }, changes: [] });
      });

      it('leaves strings that are not plain decimal numbers alone', () => {
        for (const raw of ['', ' ', 'abc', '5 apples', '0x10', 'Infinity', 'NaN', '1e999', '1,000', '--1']) {
          assert.deepEqual(normalizeArguments({ n: raw }, schema), { value: { n: raw }, changes: [] }, JSON.stringify(raw));
        }
      });

      it('understands anyOf of simple types', () => {
        assert.deepEqual(normalizeArguments({ maybe: '5' }, schema).value, { maybe: 5 });
      });

      it('shortens long values in the change note', () => {
        const long = `0.${'0'.repeat(28)}1`;
        const [change] = normalizeArguments({ n: long }, schema).changes;
        assert.ok(change!.startsWith(`/n: "${long.slice(0, 17)}…" → `), change);
      });

      // BUG: "12345678901234567890" becomes 12345678901234567000 because Number.isInteger accepts any
      // whole double; the call then passes validation and reaches the server with a different ID.
      // Fix in normalizeValue (src/core/schema/argumentNormalizer.ts): accept integer-valued strings only
      // when they round-trip exactly, e.g. replace
      //   `if (Number.isFinite(n) && (types.has('number') || Number.isInteger(n)))`
      // with
      //   `if (Number.isFinite(n) && (types.has('number') || Number.isInteger(n)) && (!/^-?\d+$/.test(value.trim()) || Number.isSafeInteger(n)))`
      it('leaves integer strings beyond 2^53 alone instead of losing digits', () => {
        assert.deepEqual(normalizeArguments({ i: '12345678901234567890' }, schema), { value: { i: '12345678901234567890' }, changes: [] });
        assert.deepEqual(normalizeArguments({ n: '12345678901234567890' }, schema), { value: { n: '12345678901234567890' }, changes: [] });
      });

      it('still converts the largest safe integer', () => {
        assert.deepEqual(normalizeArguments({ i: String(Number.MAX_SAFE_INTEGER) }, schema).value, { i: Number.MAX_SAFE_INTEGER });
      });
    });

    describe('null values', () => {
      const schema = {
        type: 'object',
        properties: {
          optional: { type: 'string' },
          needed: { type: 'string' },
          nullableArray: { type: ['string', 'null'] },
          nullableFlag: { type: 'string', nullable: true },
          nullableAnyOf: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
        },
        required: ['needed'],
      };

      it('removes null from an optional property that does not allow null, and reports it', () => {
        assert.deepEqual(normalizeArguments({ optional: null, needed: 'x' }, schema), {
          value: { needed: 'x' },
          changes: ['/optional: null removed (optional)'],
        });
      });

      it('keeps null on a required property (validation then reports it)', () => {
        assert.deepEqual(normalizeArguments({ needed: null }, schema), { value: { needed: null }, changes: [] });
      });

      it('keeps null where the schema allows it (type array, nullable, anyOf)', () => {
        const args = { needed: 'x', nullableArray: null, nullableFlag: null, nullableAnyOf: null };
        assert.deepEqual(normalizeArguments(args, schema), { value: args, changes: [] });
      });

      it('keeps null on a property the schema does not describe', () => {
        assert.deepEqual(normalizeArguments({ needed: 'x', unknown: null }, schema).value, { needed: 'x', unknown: null });
      });

      it('keeps null where a local $ref target allows it', () => {
        const refSchema = { type: 'object', properties: { v: { $ref: '#/$defs/maybe' } }, $defs: { maybe: { type: ['number', 'null'] } } };
        assert.deepEqual(normalizeArguments({ v: null }, refSchema).value, { v: null });
      });

      // BUG: a schema can allow null without a "null" type: `enum` listing null, or `const: null`.
      // The normalizer removes the value anyway, so the server gets its default instead of the null the
      // model chose. Fix in normalizeValue (src/core/schema/argumentNormalizer.ts): replace
      //   `!schemaTypes(resolveLocalRef(propertySchema, root)).has('null')`
      // with `!allowsNull(resolveLocalRef(propertySchema, root))`, where
      //   function allowsNull(s: Schema): boolean {
      //     return schemaTypes(s).has('null') || s['const'] === null || (Array.isArray(s['enum']) && s['enum'].includes(null));
      //   }
      it('keeps null where the schema lists null in enum or const', () => {
        const enumSchema = objectSchema({ order: { enum: ['asc', 'desc', null] }, cleared: { const: null } });
        assert.deepEqual(normalizeArguments({ order: null, cleared: null }, enumSchema), { value: { order: null, cleared: null }, changes: [] });
      });
    });

    describe('nesting', () => {
      it('normalizes nested objects and reports the full path', () => {
        const schema = objectSchema({
          filter: objectSchema({ limit: { type: 'integer' }, deep: objectSchema({ on: { type: 'boolean' } }) }),
        });
        assert.deepEqual(normalizeArguments({ filter: { limit: '10', deep: { on: 'true' } } }, schema), {
          value: { filter: { limit: 10, deep: { on: true } } },
          changes: ['/filter/limit: "10" → 10', '/filter/deep/on: "true" → true'],
        });
      });

      it('normalizes array items by index', () => {
        const schema = objectSchema({ ids: { type: 'array', items: { type: 'number' } } });
        assert.deepEqual(normalizeArguments({ ids: ['1', 2, 'x', '4'] }, schema), {
          value: { ids: [1, 2, 'x', 4] },
          changes: ['/ids/0: "1" → 1', '/ids/3: "4" → 4'],
        });
      });

      it('normalizes objects inside arrays', () => {
        const schema = objectSchema({ rows: { type: 'array', items: objectSchema({ on: { type: 'boolean' }, note: { type: 'string' } }) } });
        assert.deepEqual(normalizeArguments({ rows: [{ on: 'false', note: null }, { on: true }] }, schema), {
          value: { rows: [{ on: false }, { on: true }] },
          changes: ['/rows/0/on: "false" → false', '/rows/0/note: null removed (optional)'],
        });
      });

      it('leaves arrays alone when the schema has no items schema', () => {
        const schema = objectSchema({ list: { type: 'array' } });
        assert.deepEqual(normalizeArguments({ list: ['1', null] }, schema), { value: { list: ['1', null] }, changes: [] });
      });

      it('stops descending below MAX_ARGUMENT_DEPTH without throwing', () => {
        const schema = { $ref: '#/$defs/node', $defs: { node: objectSchema({ n: { type: 'number' }, child: { $ref: '#/$defs/node' } }) } };
        const levels = MAX_ARGUMENT_DEPTH + 10;
        let args: Record<string, unknown> = { n: '1' };
        for (let i = 0; i < levels; i++) args = { n: '1', child: args };
        const { value } = normalizeArguments(args, schema);
        const ns: unknown[] = [];
        for (let node: unknown = value; node !== undefined; node = (node as Record<string, unknown>)['child']) ns.push((node as Record<string, unknown>)['n']);
        assert.equal(ns.length, levels + 1);
        assert.equal(ns[0], 1);
        assert.equal(ns[MAX_ARGUMENT_DEPTH - 1], 1);
        assert.equal(ns[levels], '1');
      });
    });

    describe('local $ref', () => {
      it('follows #/$defs/...', () => {
        const schema = { type: 'object', properties: { n: { $ref: '#/$defs/count' } }, $defs: { count: { type: 'integer' } } };
        assert.deepEqual(normalizeArguments({ n: '3' }, schema).value, { n: 3 });
      });

      it('follows #/definitions/...', () => {
        const schema = { type: 'object', properties: { on: { $ref: '#/definitions/flag' } }, definitions: { flag: { type: 'boolean' } } };
        assert.deepEqual(normalizeArguments({ on: 'true' }, schema).value, { on: true });
      });

      it('decodes JSON-pointer escapes (~1 for /, ~0 for ~)', () => {
        const schema = { type: 'object', properties: { a: { $ref: '#/definitions/a~1b~0c' } }, definitions: { 'a/b~c': { type: 'number' } } };
        assert.deepEqual(normalizeArguments({ a: '1' }, schema).value, { a: 1 });
      });

      it('follows a chain of references and a $ref at the root', () => {
        const schema = {
          $ref: '#/$defs/root',
          $defs: { root: objectSchema({ n: { $ref: '#/$defs/alias' } }), alias: { $ref: '#/$defs/num' }, num: { type: 'number' } },
        };
        assert.deepEqual(normalizeArguments({ n: '2' }, schema).value, { n: 2 });
      });

      it('ends on reference cycles and leaves the value alone', () => {
        const schema = { type: 'object', properties: { x: { $ref: '#/$defs/a' } }, $defs: { a: { $ref: '#/$defs/b' }, b: { $ref: '#/$defs/a' } } };
        assert.deepEqual(normalizeArguments({ x: '1' }, schema), { value: { x: '1' }, changes: [] });
      });

      it('does not follow remote or missing references', () => {
        const schema = objectSchema({ remote: { $ref: 'https://example.com/num.json' }, missing: { $ref: '#/$defs/nope' } });
        assert.deepEqual(normalizeArguments({ remote: '1', missing: '2' }, schema), { value: { remote: '1', missing: '2' }, changes: [] });
      });
    });

    describe('safety', () => {
      afterEach(() => {
        // Leave no trace for other tests if a case below ever pollutes the prototype.
        delete (Object.prototype as Record<string, unknown>)['polluted'];
      });

      it('keeps __proto__ and constructor as own data properties and does not touch Object.prototype', () => {
        const args = JSON.parse('{"__proto__": {"polluted": "yes"}, "constructor": {"prototype": {"polluted": "yes"}}, "plain": "1"}') as Record<string, unknown>;
        const schema = objectSchema({ plain: { type: 'number' } });
        const { value } = normalizeArguments(args, schema);
        assert.equal(Object.getPrototypeOf(value), Object.prototype);
        assert.ok(Object.prototype.hasOwnProperty.call(value, '__proto__'));
        assert.ok(Object.prototype.hasOwnProperty.call(value, 'constructor'));
        assert.deepEqual(Object.keys(value), ['__proto__', 'constructor', 'plain']);
        assert.equal(value['plain'], 1);
        assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
        assert.equal((value as Record<string, unknown>)['polluted'], undefined);
        const proto = Object.getOwnPropertyDescriptor(value, '__proto__')!.value as Record<string, unknown>;
        assert.deepEqual(proto, JSON.parse('{"polluted": "yes"}'));
      });

      it('normalizes inside __proto__ and constructor when the schema describes them, still as own data', () => {
        const schema = JSON.parse(
          '{"type": "object", "properties": {"__proto__": {"type": "object", "properties": {"polluted": {"type": "boolean"}}}, "constructor": {"type": "number"}}}',
        ) as Record<string, unknown>;
        const args = JSON.parse('{"__proto__": {"polluted": "true"}, "constructor": "5"}') as Record<string, unknown>;
        const { value, changes } = normalizeArguments(args, schema);
        assert.equal(Object.getPrototypeOf(value), Object.prototype);
        assert.deepEqual(Object.getOwnPropertyDescriptor(value, '__proto__')!.value, { polluted: true });
        assert.equal(Object.getOwnPropertyDescriptor(value, 'constructor')!.value, 5);
        assert.deepEqual(changes, ['/__proto__/polluted: "true" → true', '/constructor: "5" → 5']);
        assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
      });

      it('does not treat inherited names (__proto__, constructor) as properties the schema describes', () => {
        // Looked up without an own-property check, properties["__proto__"] would be Object.prototype and the null would be dropped.
        const args = JSON.parse('{"__proto__": null, "constructor": null, "toString": "true"}') as Record<string, unknown>;
        const { value, changes } = normalizeArguments(args, objectSchema({}));
        assert.deepEqual(changes, []);
        assert.deepEqual(Object.keys(value), ['__proto__', 'constructor', 'toString']);
        assert.equal(Object.getOwnPropertyDescriptor(value, '__proto__')!.value, null);
        assert.equal(Object.getPrototypeOf(value), Object.prototype);
      });

      it('passes arguments that need no fix through as they are', () => {
        const args = { n: 5, list: [1, 2], nested: { on: true }, text: 'x' };
        const schema = objectSchema({ n: { type: 'number' }, list: { type: 'array', items: { type: 'number' } }, nested: objectSchema({ on: { type: 'boolean' } }), text: { type: 'string' } });
        const { value, changes } = normalizeArguments(args, schema);
        assert.equal(value, args);
        assert.deepEqual(changes, []);
      });

      it('copies only what it changes: untouched siblings keep their identity', () => {
        const args = { keep: { deep: { x: 1 } }, list: [{ a: 1 }], fix: { n: '5' } };
        const schema = objectSchema({
          keep: objectSchema({ deep: objectSchema({ x: { type: 'number' } }) }),
          list: { type: 'array', items: objectSchema({ a: { type: 'number' } }) },
          fix: objectSchema({ n: { type: 'number' } }),
        });
        const { value } = normalizeArguments(args, schema);
        assert.deepEqual(value, { keep: { deep: { x: 1 } }, list: [{ a: 1 }], fix: { n: 5 } });
        assert.notEqual(value, args);
        assert.equal(value['keep'], args.keep);
        assert.equal(value['list'], args.list);
        assert.notEqual(value['fix'], args.fix);
      });

      it('keeps key order when it copies, including keys after a removed null', () => {
        const schema = objectSchema({ a: { type: 'string' }, b: { type: 'number' }, c: { type: 'string' }, d: { type: 'boolean' } });
        const { value } = normalizeArguments({ a: 'x', b: '1', c: null, d: 'true', e: 'extra' }, schema);
        assert.deepEqual(Object.entries(value), [
          ['a', 'x'],
          ['b', 1],
          ['d', true],
          ['e', 'extra'],
        ]);
      });

      it('returns a fresh object when something changed and leaves the input as it was', () => {
        const args = { n: '5', nested: { n: '6' } };
        const copy = structuredClone(args);
        const { value } = normalizeArguments(args, objectSchema({ n: { type: 'number' }, nested: objectSchema({ n: { type: 'number' } }) }));
        assert.notEqual(value, args);
        assert.deepEqual(args, copy);
      });

      it('returns the arguments unchanged when there is no usable schema', () => {
        for (const schema of [undefined, null, 'string', 42, [{ type: 'object' }]]) {
          assert.deepEqual(normalizeArguments({ n: '5', x: null }, schema), { value: { n: '5', x: null }, changes: [] }, JSON.stringify(schema));
        }
      });
    });
  });
});
