import assert from 'node:assert/strict';
import { flatFields, parseFieldValue, schemaSkeleton } from '../../src/core/schema/schemaForms';

describe('schemaForms', () => {
  it('makes one field per primitive property, with required, description and default', () => {
    const fields = flatFields({ type: 'object', properties: { path: { type: 'string', description: 'where' }, n: { type: 'integer', default: 3 }, on: { type: ['boolean', 'null'] } }, required: ['path'] });
    assert.deepEqual(fields, [
      { name: 'path', required: true, description: 'where', kind: 'string' },
      { name: 'n', required: false, defaultValue: 3, kind: 'integer' },
      { name: 'on', required: false, kind: 'boolean' },
    ]);
  });

  it('reads the enum forms elicitation uses: enum with enumNames, oneOf/anyOf of const and title, and multi-select arrays', () => {
    const fields = flatFields({
      type: 'object',
      properties: {
        plain: { type: 'string', enum: ['a', 'b'], enumNames: ['Apple', 'Banana'] },
        titled: { type: 'string', oneOf: [{ const: 'r', title: 'Red' }, { const: 'g', title: 'Green' }], default: 'g' },
        many: { type: 'array', items: { anyOf: [{ const: 'x', title: 'Ex' }, { const: 'y', title: 'Why' }] }, default: ['y'] },
      },
    })!;
    assert.deepEqual(fields.map((f) => [f.name, f.kind, f.options, f.labels]), [
      ['plain', 'enum', ['a', 'b'], ['Apple', 'Banana']],
      ['titled', 'enum', ['r', 'g'], ['Red', 'Green']],
      ['many', 'multi', ['x', 'y'], ['Ex', 'Why']],
    ]);
    assert.deepEqual(parseFieldValue(fields[2]!, 'x, y'), { value: ['x', 'y'] });
    assert.match(parseFieldValue(fields[2]!, 'x, z') as string, /takes only x, y/);
  });

  it('gives up on nested objects, arrays of objects and combinators, so a JSON editor is used instead', () => {
    assert.equal(flatFields({ type: 'object', properties: { o: { type: 'object' } } }), undefined);
    assert.equal(flatFields({ type: 'object', properties: { a: { type: 'array', items: { type: 'object' } } } }), undefined);
    assert.equal(flatFields({ type: 'object', anyOf: [] }), undefined);
    assert.equal(flatFields('not a schema'), undefined);
  });

  it('parses typed text by kind, and says what is wrong', () => {
    assert.deepEqual(parseFieldValue({ name: 'n', kind: 'integer', required: true }, ' 42 '), { value: 42 });
    assert.equal(parseFieldValue({ name: 'n', kind: 'integer', required: true }, '4.5'), '"n" needs a whole number');
    assert.equal(parseFieldValue({ name: 'x', kind: 'number', required: true }, 'abc'), '"x" needs a number');
    assert.deepEqual(parseFieldValue({ name: 'b', kind: 'boolean', required: true }, 'false'), { value: false });
    assert.equal(parseFieldValue({ name: 'b', kind: 'boolean', required: true }, 'yes'), '"b" needs true or false');
    assert.deepEqual(parseFieldValue({ name: 'e', kind: 'enum', required: true, options: [1, 2] }, '2'), { value: 2 });
  });

  it('builds an editable skeleton with defaults and first enum values', () => {
    assert.deepEqual(schemaSkeleton({ type: 'object', properties: { a: { type: 'string', default: 'x' }, b: { enum: ['p', 'q'] }, c: { type: 'array' }, d: { type: 'integer' } } }), { a: 'x', b: 'p', c: [], d: 0 });
  });
});
