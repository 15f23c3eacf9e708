import assert from 'node:assert/strict';
import type { Embedder } from '../../../src/core/embedding/embedder';
import { ToolIndex } from '../../../src/core/selection/toolIndex';

/**
 * A fake embedder (no model): each call resolves on the next turn of the event loop with a one-number
 * vector per text, and it records how many of its calls were running at once.
 */
class CountingEmbedder implements Embedder {
  readonly modelId = 'fake:counting';
  readonly dimension = 1;
  running = 0;
  most = 0;
  calls = 0;
  constructor(
    readonly concurrentCalls?: number,
    private readonly failOnCall?: number,
  ) {}

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    this.calls++;
    const call = this.calls;
    // The failing call fails at once, while the others are still out.
    if (call === this.failOnCall) throw new Error('the fake model failed');
    this.running++;
    this.most = Math.max(this.most, this.running);
    await new Promise((resolve) => setImmediate(resolve));
    this.running--;
    return texts.map((t) => Float32Array.of(t.length));
  }

  async dispose(): Promise<void> {}
}

const texts = Array.from({ length: 1000 }, (_, i) => `tool text ${i}`);

describe('ToolIndex: embedding the catalogue', () => {
  it('sends one batch at a time to an embedder on this thread', async () => {
    const embedder = new CountingEmbedder();
    const index = new ToolIndex(embedder);
    index.update(texts);
    await index.whenReady();
    assert.equal(embedder.most, 1);
    assert.deepEqual(index.readiness(), { ready: 1000, total: 1000 });
  });

  it('keeps as many batches as it asks for with an embedder off this thread, and every text gets its own vector', async () => {
    const embedder = new CountingEmbedder(4);
    const index = new ToolIndex(embedder);
    index.update(texts);
    await index.whenReady();
    assert.equal(embedder.most, 4);
    assert.deepEqual(index.readiness(), { ready: 1000, total: 1000 });
    assert.equal(index.get('tool text 999')![0], 'tool text 999'.length);
  });

  it('stops sending after a batch fails, and says why once', async () => {
    const embedder = new CountingEmbedder(4, 2);
    const errors: string[] = [];
    const index = new ToolIndex(embedder, (m) => errors.push(m));
    index.update(texts);
    await index.whenReady();
    assert.equal(errors.length, 1);
    assert.match(errors[0]!, /the fake model failed/);
    assert.match(index.error ?? '', /the fake model failed/);
    assert.ok(embedder.calls <= 5, `${embedder.calls} calls: the four in flight and none after the failure`);
    assert.ok(index.readiness().ready < 1000);
  });

  it('settles after a failure even when the catalogue changed meanwhile, and embeds it on the next change', async () => {
    const embedder = new CountingEmbedder(4, 1);
    const index = new ToolIndex(embedder);
    index.update(texts);
    // The first batch has failed; the others are still out when a new catalogue arrives.
    await Promise.resolve();
    index.update([...texts, 'one more tool']);
    await index.whenReady();
    assert.ok(index.readiness().ready < index.readiness().total);
    index.update([...texts, 'one more tool', 'and another']);
    await index.whenReady();
    assert.deepEqual(index.readiness(), { ready: 1002, total: 1002 });
  });
});
