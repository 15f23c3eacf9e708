import type { Embedder } from '../embedding/embedder';
import { toolEmbeddingText, type RankableTool } from './toolDocument';
import type { SelectableTool } from './selectionTypes';
import { describeError } from '../errors/describeError';

/**
 * The embedding index of the catalogue. It follows the catalogue: when tools come or go, only texts it
 * has not seen are embedded (a disk cache under the embedder does the rest), in the background, so
 * selection never waits for it; tools without a vector yet are ranked on their lexical score alone.
 */

/** Texts embedded per background step: large enough to batch well, small enough to yield often. */
const INDEX_BATCH = 64;

/**
 * The text embedded for a tool: exactly what the default model was trained on (`toolEmbeddingText`),
 * from the tool's own name and description (not the router's `server_` prefix and `[server]` tag, which
 * are the same for every tool of a server and would pull them together).
 */
export function embeddingTextFor(tool: SelectableTool): string {
  return toolEmbeddingText(rankableFor(tool));
}

/** The tool as ranking reads it: its own name and description, keyed by its unique (exposed) name. */
export function rankableFor(tool: SelectableTool): RankableTool {
  return { id: tool.name, name: tool.originalName ?? tool.name, description: tool.originalDescription ?? tool.description, inputSchema: tool.inputSchema, server: tool.server };
}

export class ToolIndex {
  private readonly vectors = new Map<string, Float32Array>();
  private pending: string[] = [];
  private running: Promise<void> | undefined;
  private failure: string | undefined;
  private disposed = false;
  private wanted = new Set<string>();
  private changes = 0;
  private counted: { version: number; ready: number; total: number } | undefined;

  /**
   * @param embedder embeds tool texts (usually through the disk cache)
   * @param queryEmbedder embeds prompts; by default the same embedder
   */
  constructor(
    private readonly embedder: Embedder,
    private readonly onError: (message: string) => void = () => undefined,
    private readonly queryEmbedder: Embedder = embedder,
  ) {}

  /** Changes whenever vectors are added or removed, so users can cache what they derive from them. */
  get version(): number {
    return this.changes;
  }

  get modelId(): string {
    return this.embedder.modelId;
  }

  /** The last embedding failure, if the embedder could not be used. */
  get error(): string | undefined {
    return this.failure;
  }

  /** Sets the texts the index should hold; embeds the missing ones in the background. */
  update(texts: readonly string[]): void {
    this.wanted = new Set(texts);
    for (const key of [...this.vectors.keys()]) if (!this.wanted.has(key)) this.vectors.delete(key);
    this.changes++;
    this.pending = [...this.wanted].filter((t) => !this.vectors.has(t));
    if (this.pending.length > 0 && !this.running) this.running = this.drain().finally(() => (this.running = undefined));
  }

  get(text: string): Float32Array | undefined {
    return this.vectors.get(text);
  }

  /** How many wanted texts have a vector; counted again only after a change, as it is asked on every prompt. */
  readiness(): { ready: number; total: number } {
    if (this.counted?.version !== this.changes) {
      let ready = 0;
      for (const t of this.wanted) if (this.vectors.has(t)) ready++;
      this.counted = { version: this.changes, ready, total: this.wanted.size };
    }
    return { ready: this.counted.ready, total: this.counted.total };
  }

  /** Resolves when every wanted text has a vector (or embedding failed). */
  async whenReady(): Promise<void> {
    while (this.running) await this.running;
  }

  embedQuery(text: string, signal?: AbortSignal): Promise<Float32Array> {
    return this.queryEmbedder.embed([text], signal).then((v) => v[0]!);
  }

  dispose(): void {
    this.disposed = true;
    this.pending = [];
  }

  private async drain(): Promise<void> {
    // An embedder off this thread (a worker) takes several batches at once, so it never waits for this
    // thread to send the next; one on this thread gets one at a time, with a pause between.
    const depth = Math.max(1, this.embedder.concurrentCalls ?? 1);
    const running = new Set<Promise<void>>();
    let failed = false;
    const embedBatch = async (batch: string[]): Promise<void> => {
      try {
        const vectors = await this.embedder.embed(batch);
        batch.forEach((text, i) => {
          if (this.wanted.has(text)) this.vectors.set(text, vectors[i]!);
        });
        this.changes++;
        if (!failed) this.failure = undefined;
      } catch (error) {
        if (failed) return;
        failed = true;
        this.failure = describeError(error);
        this.onError(`Embedding tool descriptions failed: ${this.failure}`);
        this.pending = [];
      }
    };
    // After a failure nothing more is sent; the batches still out finish on their own.
    while (!this.disposed && !failed && (this.pending.length > 0 || running.size > 0)) {
      while (running.size < depth && this.pending.length > 0) {
        const task: Promise<void> = embedBatch(this.pending.splice(0, INDEX_BATCH)).finally(() => running.delete(task));
        running.add(task);
      }
      await Promise.race(running);
      // Let calls and UI work run between batches.
      if (depth === 1) await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
}
