import assert from 'node:assert/strict';
import { MAX_ARGUMENT_BYTES, MAX_ARGUMENT_DEPTH, MAX_ARGUMENT_NODES, checkArgumentLimits, checkJsonTextLimits, parseArguments } from '../../src/core/schema/argumentNormalizer';

/** `{"a":{"a":…1…}}`, `levels` objects deep, built without recursion. */
function nestedObject(levels: number): Record<string, unknown> {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = { a: value };
  return value as Record<string, unknown>;
}

function nestedText(levels: number): string {
  return `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
}

function refusal(raw: unknown): string {
  const parsed = parseArguments(raw);
  assert.ok(!parsed.ok, 'expected the arguments to be refused');
  return parsed.message;
}

describe('argument limits', function () {
  // Builds and walks arguments of MAX_ARGUMENT_BYTES and MAX_ARGUMENT_NODES (~0.3 s idle); a loaded machine is several times slower.
  this.timeout(20_000);
  describe('depth', () => {
    it('refuses arguments 100,000 deep, as an object and as a JSON string, without overflowing', () => {
      assert.match(refusal(nestedObject(100_000)), /more than 64 levels deep \(MAX_ARGUMENT_DEPTH\)/);
      assert.match(refusal(nestedText(100_000)), /more than 64 levels deep \(MAX_ARGUMENT_DEPTH\)/);
      const arrays = `{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
      assert.match(refusal(arrays), /MAX_ARGUMENT_DEPTH/);
    });

    it('accepts exactly MAX_ARGUMENT_DEPTH levels and refuses one more, in both forms alike', () => {
      assert.equal(checkArgumentLimits(nestedObject(MAX_ARGUMENT_DEPTH)), undefined);
      assert.equal(checkJsonTextLimits(nestedText(MAX_ARGUMENT_DEPTH)), undefined);
      assert.ok(parseArguments(nestedText(MAX_ARGUMENT_DEPTH)).ok);
      assert.match(checkArgumentLimits(nestedObject(MAX_ARGUMENT_DEPTH + 1)) ?? '', /MAX_ARGUMENT_DEPTH/);
      assert.match(checkJsonTextLimits(nestedText(MAX_ARGUMENT_DEPTH + 1)) ?? '', /MAX_ARGUMENT_DEPTH/);
    });

    it('counts arrays as levels too', () => {
      let value: unknown = [];
      for (let i = 1; i < MAX_ARGUMENT_DEPTH - 1; i++) value = [value];
      assert.equal(checkArgumentLimits({ list: value }), undefined, 'the object and 63 arrays are 64 levels');
      assert.match(checkArgumentLimits({ list: [value] }) ?? '', /MAX_ARGUMENT_DEPTH/);
      assert.match(checkJsonTextLimits(JSON.stringify({ list: [value] })) ?? '', /MAX_ARGUMENT_DEPTH/);
    });

    it('ignores brackets inside strings, escaped quotes included', () => {
      const brackets = '['.repeat(1000);
      assert.equal(checkJsonTextLimits(JSON.stringify({ text: brackets, quoted: `\\"${brackets}` })), undefined);
      assert.ok(parseArguments(JSON.stringify({ text: brackets, quoted: `\\"${brackets}` })).ok);
    });

    it('refuses a cycle as too deep instead of walking it forever', () => {
      const cycle: Record<string, unknown> = { name: 'loop' };
      cycle['self'] = cycle;
      assert.match(refusal(cycle), /MAX_ARGUMENT_DEPTH/);
    });
  });

  describe('size', () => {
    it('accepts arguments of exactly MAX_ARGUMENT_BYTES as JSON and refuses one byte more', () => {
      const atLimit = { s: 'x'.repeat(MAX_ARGUMENT_BYTES - JSON.stringify({ s: '' }).length) };
      assert.equal(Buffer.byteLength(JSON.stringify(atLimit)), MAX_ARGUMENT_BYTES);
      assert.equal(checkArgumentLimits(atLimit), undefined);
      assert.equal(checkJsonTextLimits(JSON.stringify(atLimit)), undefined);
      const over = { s: `${atLimit.s}x` };
      assert.match(checkArgumentLimits(over) ?? '', /above the 4194304-byte limit \(MAX_ARGUMENT_BYTES\)/);
      assert.match(refusal(JSON.stringify(over)), /4194305 bytes as JSON, above the 4194304-byte limit \(MAX_ARGUMENT_BYTES\)/);
    });

    it('counts UTF-8 bytes, not characters', () => {
      const euros = '€'.repeat(Math.ceil(MAX_ARGUMENT_BYTES / 3) + 1); // 3 bytes each, fewer characters than the limit
      assert.ok(euros.length < MAX_ARGUMENT_BYTES);
      assert.match(refusal({ text: euros }), /MAX_ARGUMENT_BYTES/);
      assert.match(refusal(JSON.stringify({ text: euros })), /MAX_ARGUMENT_BYTES/);
    });

    it('refuses oversized text before parsing it (even text that is not JSON at all)', () => {
      assert.match(refusal(`{${'x'.repeat(MAX_ARGUMENT_BYTES)}`), /MAX_ARGUMENT_BYTES/);
    });

    it('counts keys toward the size', () => {
      const keys: Record<string, unknown> = {};
      for (let i = 0; i < 1000; i++) keys[`${'k'.repeat(4200)}${i}`] = 0;
      assert.ok(Buffer.byteLength(JSON.stringify(keys)) > MAX_ARGUMENT_BYTES);
      assert.match(refusal(keys), /MAX_ARGUMENT_BYTES/);
    });
  });

  describe('value count', () => {
    it('accepts MAX_ARGUMENT_NODES values and refuses one more', () => {
      const atLimit = { list: new Array<number>(MAX_ARGUMENT_NODES - 2).fill(0) }; // + the object + the array
      assert.equal(checkArgumentLimits(atLimit), undefined);
      assert.equal(checkArgumentLimits(JSON.parse(JSON.stringify(atLimit))), undefined);
      const over = { list: new Array<number>(MAX_ARGUMENT_NODES - 1).fill(0) };
      assert.match(checkArgumentLimits(over) ?? '', /more than 100000 values \(MAX_ARGUMENT_NODES\)/);
      assert.match(refusal(JSON.stringify(over)), /MAX_ARGUMENT_NODES/);
    });

    it('refuses a huge sparse array by its length, without walking it', () => {
      assert.match(refusal({ list: new Array(1e9) }), /MAX_ARGUMENT_NODES/);
    });

    it('refuses an object with too many keys', () => {
      const many: Record<string, number> = {};
      for (let i = 0; i <= MAX_ARGUMENT_NODES; i++) many[`k${i}`] = i;
      assert.match(refusal(many), /MAX_ARGUMENT_NODES/);
    });
  });

  it('lets ordinary arguments through unchanged', () => {
    const args = { path: '/tmp/a.txt', lines: [1, 2, 3], options: { recursive: true, depth: null, pattern: '[a-z]+' } };
    assert.equal(checkArgumentLimits(args), undefined);
    const parsed = parseArguments(JSON.stringify(args));
    assert.ok(parsed.ok);
    assert.deepEqual(parsed.value, args);
  });
});
