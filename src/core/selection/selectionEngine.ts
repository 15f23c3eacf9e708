import * as path from 'node:path';
import { EmbeddingCache, CachedEmbedder } from '../embedding/embeddingCache';
import type { Embedder } from '../embedding/embedder';
import { HttpEmbedder } from '../embedding/httpEmbedder';
import { OnnxEmbedder } from '../embedding/onnxEmbedder';
import { LexicalRanker } from './lexicalRanker';
import { ToolIndex, rankableFor } from './toolIndex';
import { DEFAULT_SELECTION_OPTIONS, ToolSelector, type SelectionOptions } from './toolSelector';

/**
 * Puts selection together from settings: the embedder (our default ONNX model, any model folder, or an
 * HTTP endpoint), the disk cache for tool vectors, the index, the lexical ranker and the selector.
 * The CLI and the extension both build selection through this one function.
 */

export type EmbeddingProvider = 'local' | 'ollama' | 'openai' | 'none';

export interface EmbeddingSettings {
  readonly provider: EmbeddingProvider;
  /** `default` (the bundled model), a model folder path (local), or a model name (ollama/openai). */
  readonly model: string;
  /** Base URL of the endpoint, for ollama and openai. */
  readonly endpoint?: string;
  /** Bearer token for openai-compatible endpoints; never logged. */
  readonly apiKey?: string;
}

export const DEFAULT_EMBEDDING_SETTINGS: EmbeddingSettings = { provider: 'local', model: 'default' };
/** Where the bundled model sits relative to the extension (or repository) root. */
export const DEFAULT_MODEL_DIR = path.join('media', 'model');

export interface SelectionEngineOptions {
  readonly embeddings: EmbeddingSettings;
  readonly selection?: Partial<SelectionOptions>;
  /** The extension's (or repository's) root: `default` resolves to `<root>/media/model`. */
  readonly root: string;
  /** Folder for the embedding cache; no disk cache without it. */
  readonly cacheFolder?: string;
  readonly log?: (message: string) => void;
  readonly quarantine?: () => ReadonlyMap<string, string>;
}

export interface SelectionEngine {
  readonly selector: ToolSelector;
  readonly index?: ToolIndex;
  /** Why there is no embedder, when there is none. */
  readonly embedderProblem?: string;
  /** Exposed name → why the tool is quarantined; search must leave these out of its ranking too. */
  readonly quarantine?: () => ReadonlyMap<string, string>;
  dispose(): Promise<void>;
}

/** Creates the embedder the settings ask for; throws an EmbeddingError with advice when it cannot. */
export async function createEmbedder(settings: EmbeddingSettings, root: string): Promise<Embedder | undefined> {
  switch (settings.provider) {
    case 'none':
      return undefined;
    case 'local': {
      const folder = settings.model === 'default' || settings.model === '' ? path.join(root, DEFAULT_MODEL_DIR) : path.resolve(root, settings.model);
      return OnnxEmbedder.load(folder);
    }
    case 'ollama':
    case 'openai':
      return new HttpEmbedder({
        api: settings.provider,
        endpoint: settings.endpoint ?? (settings.provider === 'ollama' ? 'http://127.0.0.1:11434' : ''),
        model: settings.model === 'default' ? (settings.provider === 'ollama' ? 'nomic-embed-text' : 'text-embedding-3-small') : settings.model,
        ...(settings.apiKey ? { apiKey: settings.apiKey } : {}),
      });
  }
}

export async function createSelectionEngine(options: SelectionEngineOptions): Promise<SelectionEngine> {
  const log = options.log ?? (() => undefined);
  let embedder: Embedder | undefined;
  let embedderProblem: string | undefined;
  try {
    embedder = await createEmbedder(options.embeddings, options.root);
    if (!embedder) embedderProblem = 'embeddings are turned off (provider "none")';
  } catch (error) {
    embedderProblem = (error as Error).message;
    log(`The embedder could not be created, so selection uses keywords only: ${embedderProblem}`);
  }
  let index: ToolIndex | undefined;
  let toolEmbedder: Embedder | undefined;
  if (embedder) {
    toolEmbedder = options.cacheFolder ? new CachedEmbedder(embedder, new EmbeddingCache(options.cacheFolder, { log })) : embedder;
    // Prompts go straight to the model: they rarely repeat, and need not be stored anywhere.
    index = new ToolIndex(toolEmbedder, log, embedder);
  }
  const selector = new ToolSelector(
    { ...DEFAULT_SELECTION_OPTIONS, ...options.selection },
    {
      ...(index ? { index } : {}),
      createLexical: (tools) => new LexicalRanker(tools.map(rankableFor)),
      ...(options.quarantine ? { quarantine: options.quarantine } : {}),
    },
  );
  return {
    selector,
    ...(index ? { index } : {}),
    ...(embedderProblem ? { embedderProblem } : {}),
    ...(options.quarantine ? { quarantine: options.quarantine } : {}),
    dispose: async () => {
      index?.dispose();
      await toolEmbedder?.dispose();
    },
  };
}
