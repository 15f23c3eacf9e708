import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { l2Normalize } from '../../../src/core/embedding/embedder';
import { UsageMemory, type UsageRecord } from '../../../src/core/learning/usageMemory';
import { CORRUPT_SUFFIX, parseUsageRecords, readUsageFile, serializeUsageRecords, USAGE_FILE_NAME, UsageFileError, UsageStore } from '../../../src/core/learning/usageStore';

describe('use memory store', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'usage-store-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const records: UsageRecord[] = [
    { at: 1_700_000_000_000, prompt: 'open an issue for the "login" bug\nplease', offered: ['gh_list'], called: ['gh_create_issue'], misses: ['gh_create_issue'], source: 'chat', vector: l2Normalize(Float32Array.from([0.1, -0.2, 0.3])), modelId: 'onnx:model:abc' },
    { at: 1_700_000_060_000, prompt: 'find a tool to send mail', offered: [], called: ['mail_send'], misses: ['mail_send'], source: 'agent' },
  ];

  it('round-trips records, vectors included, through the file', async () => {
    const store = new UsageStore(path.join(dir, 'nested', 'workspace'));
    await store.save(records);
    const loaded = await new UsageStore(path.join(dir, 'nested', 'workspace')).load();
    assert.deepEqual(loaded, records);
    assert.ok(loaded[0]!.vector instanceof Float32Array);
    // Only the file itself is left: the temp file was renamed over it.
    assert.deepEqual(fs.readdirSync(path.join(dir, 'nested', 'workspace')), [USAGE_FILE_NAME]);
    assert.deepEqual(await readUsageFile(store.file), records);
  });

  it('stores nothing but the records: a header and one line per record', () => {
    const text = serializeUsageRecords(records);
    const lines = text.trimEnd().split('\n');
    assert.equal(lines.length, 3);
    assert.deepEqual(Object.keys(JSON.parse(lines[1]!) as object).sort(), ['at', 'called', 'misses', 'modelId', 'offered', 'prompt', 'source', 'vector']);
    assert.deepEqual(Object.keys(JSON.parse(lines[2]!) as object).sort(), ['at', 'called', 'misses', 'offered', 'prompt', 'source']);
  });

  it('starts empty when there is no file', async () => {
    assert.deepEqual(await new UsageStore(dir).load(), []);
  });

  for (const [what, mangle] of [
    ['a truncated last line', (text: string) => text.slice(0, text.length - 40)],
    ['bytes that are not JSON', () => 'garbage\u0000\u0001'],
    ['another format’s header', () => '{"format":"something-else","version":1}\n'],
    ['a bad vector', (text: string) => text.replace(/"vector":"[^"]+"/, '"vector":"abc"')],
    ['a bad field', (text: string) => text.replace('"called":["gh_create_issue"]', '"called":"gh_create_issue"')],
  ] as const) {
    it(`keeps a file with ${what} aside as .corrupt, says so, and starts empty`, async () => {
      const messages: string[] = [];
      const store = new UsageStore(dir, { log: (m) => messages.push(m) });
      fs.writeFileSync(store.file, mangle(serializeUsageRecords(records)));
      const bad = fs.readFileSync(store.file);
      assert.deepEqual(await store.load(), []);
      assert.equal(fs.existsSync(store.file), false);
      assert.deepEqual(fs.readFileSync(`${store.file}${CORRUPT_SUFFIX}`), bad);
      assert.equal(messages.length, 1);
      assert.match(messages[0]!, /could not be read \(.+\)\. It was kept aside as .*tool-usage\.jsonl\.corrupt, and learning starts afresh/);
      // And the next save works.
      await store.save(records.slice(1));
      assert.deepEqual(await store.load(), records.slice(1));
    });
  }

  it('names the line and the problem in a parse error', () => {
    const text = serializeUsageRecords(records).replace('"prompt":"find', '"prompt":12,"x":"find');
    assert.throws(() => parseUsageRecords(text, 'usage.jsonl'), (e: unknown) => e instanceof UsageFileError && /usage\.jsonl, line 3: "prompt" must be a string/.test(e.message));
    assert.throws(() => parseUsageRecords('', 'usage.jsonl'), /empty/);
  });

  it('saves soon after changes, in one write, and flush waits for it', async () => {
    const store = new UsageStore(dir, { saveDelayMs: 10_000 });
    const memory = new UsageMemory({ onChange: () => store.saveSoon(() => memory.records()) });
    memory.record({ prompt: 'one', called: ['a'] });
    memory.record({ prompt: 'two', called: ['b'] });
    assert.equal(fs.existsSync(store.file), false, 'not written before the delay');
    await store.flush();
    assert.deepEqual((await store.load()).map((r) => r.prompt), ['one', 'two']);
  });

  it('delete removes the file and any copy kept aside', async () => {
    const store = new UsageStore(dir);
    await store.save(records);
    fs.writeFileSync(`${store.file}${CORRUPT_SUFFIX}`, 'old');
    store.saveSoon(() => records);
    await store.delete();
    assert.deepEqual(fs.readdirSync(dir), []);
  });

  it('the CLI reader says when the file is missing', async () => {
    await assert.rejects(readUsageFile(path.join(dir, 'nope.jsonl')), /Cannot read the records file .*nope\.jsonl: it does not exist/);
  });
});
