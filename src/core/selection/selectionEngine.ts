import { createHash } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { EmbeddingCache, CachedEmbedder } from '../embedding/embeddingCache';
import { isLocalModel, type Embedder, type LocalModelLoader } from '../embedding/embedder';
import { HttpEmbedder } from '../embedding/httpEmbedder';
import { GeneralNeeds, readNeedsFile } from './generalNeeds';
import { LexicalRanker } from './lexicalRanker';
import { parseDictionary } from './spelling';
import { readBundledText } from '../util/bundledText';
import { ToolIndex, rankableFor } from './toolIndex';
import { ToolReadings } from './toolReadings';
import { writeFileAtomic } from '../util/atomicWrite';
import { DEFAULT_SELECTION_OPTIONS, ToolSelector, type SelectionOptions, type SelectorDeps, type UsageHints } from './toolSelector';
import { describeError } from '../errors/describeError';

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
/** The unnamed-needs models (scripts/model/trainNeeds.ts), relative to the root; they work with any embedder. */
export const GENERAL_NEEDS_FILE = path.join('media', 'needs', 'general-needs.json');

export { readBundledText } from '../util/bundledText';

/** The word lists of spelling tolerance (scripts/data/buildSpellingWords.ts), relative to the root. */
export const SPELLING_WORDS_FILE = path.join('media', 'spelling', 'words.txt');
export const SPELLING_NAMES_FILE = path.join('media', 'spelling', 'names.txt');

/**
 * Loads the spelling dictionary and the first names it leaves alone; a missing or empty file turns
 * spelling tolerance off with the reason logged.
 */
export function loadSpellingWords(root: string, log: (message: string) => void = () => undefined): { dictionary: ReadonlyMap<string, number>; names: ReadonlySet<string> } | undefined {
  let file = '';
  try {
    const read = (name: string): Map<string, number> => {
      file = path.join(root, name);
      const words = parseDictionary(readBundledText(file));
      if (words.size === 0) throw new Error('it holds no words');
      return words;
    };
    const dictionary = read(SPELLING_WORDS_FILE);
    return { dictionary, names: new Set(read(SPELLING_NAMES_FILE).keys()) };
  } catch (error) {
    log(`Prompts will be read as typed, without spelling tolerance: ${file} could not be read (${describeError(error)}). Reinstall the extension, or run npx tsx scripts/data/buildSpellingWords.ts in a clone.`);
    return undefined;
  }
}

/** Loads the unnamed-needs models; a missing or broken file turns the stage off with the reason logged. */
export function loadGeneralNeeds(root: string, log: (message: string) => void = () => undefined, file = path.join(root, GENERAL_NEEDS_FILE)): GeneralNeeds | undefined {
  return loadNeedsWithDigest(root, log, file)?.model;
}

/** The needs models and a digest of their file, which saved tool readings are stamped with. */
function loadNeedsWithDigest(root: string, log: (message: string) => void, file = path.join(root, GENERAL_NEEDS_FILE)): { model: GeneralNeeds; digest: string } | undefined {
  try {
    const text = readBundledText(file);
    return { model: new GeneralNeeds(readNeedsFile(JSON.parse(text))), digest: createHash('sha1').update(text).digest('base64url') };
  } catch (error) {
    log(`General-purpose tools will not be raised for unnamed needs: ${file} could not be read (${describeError(error)}). Reinstall the extension, or run npm run train:needs in a clone.`);
    return undefined;
  }
}

/** Where, in the cache folder, each tool's readings are kept between starts (toolReadings.ts). */
export const TOOL_READINGS_FILE = 'tool-readings.json';
/** New readings are written this long after a catalogue that read them, as the embedding cache waits too. */
const READINGS_SAVE_DELAY_MS = 5_000;

/**
 * What selection read of each tool, kept in the cache folder: a start with the tools of last time then reads
 * none of them again. Loading or saving that fails only costs the reading, so it is logged and let go.
 */
class SavedReadings {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private saving: Promise<void> = Promise.resolve();
  /** The file's text as read at start, while the model loads. */
  readonly text: Promise<string | undefined>;

  constructor(
    readonly file: string,
    private readonly log: (message: string) => void,
  ) {
    this.text = readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') log(`Saved tool readings could not be read from ${file} (${describeError(error)}); every tool is read again.`);
      return undefined;
    });
  }

  async loadInto(readings: ToolReadings): Promise<void> {
    const text = await this.text;
    if (text === undefined) return;
    let outcome: ReturnType<ToolReadings['load']>;
    try {
      outcome = readings.load(JSON.parse(text));
    } catch (error) {
      outcome = { refused: describeError(error) };
    }
    if ('refused' in outcome) this.log(`Saved tool readings in ${this.file} were not used: ${outcome.refused}. They are written again.`);
  }

  /** Writes the readings after a quiet moment; never keeps a CLI alive. */
  schedule(readings: ToolReadings): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.save(readings), READINGS_SAVE_DELAY_MS);
    this.timer.unref?.();
  }

  /** Writes a scheduled save now (and waits for one under way). */
  async flush(readings: ToolReadings): Promise<void> {
    if (this.timer) await this.save(readings);
    await this.saving;
  }

  private save(readings: ToolReadings): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.saving = this.saving.then(async () => {
      try {
        await mkdir(path.dirname(this.file), { recursive: true });
        await writeFileAtomic(this.file, JSON.stringify(readings.save()));
      } catch (error) {
        this.log(`Tool readings could not be saved to ${this.file} (${describeError(error)}); the next start reads every tool again.`);
      }
    });
    return this.saving;
  }
}

export interface SelectionEngineOptions {
  readonly embeddings: EmbeddingSettings;
  readonly selection?: Partial<SelectionOptions>;
  /** The extension's (or repository's) root: `default` resolves to `<root>/media/model`. */
  readonly root: string;
  /** Another unnamed-needs file than the bundled one (evaluation of trained variants). */
  readonly needsFile?: string;
  /** Folder for the embedding cache; no disk cache without it. */
  readonly cacheFolder?: string;
  readonly log?: (message: string) => void;
  readonly quarantine?: () => ReadonlyMap<string, string>;
  /** What past prompts needed (the use memory, src/core/learning/usageMemory.ts); none without it. */
  readonly usage?: UsageHints;
  /**
   * How a local model folder is loaded: `loadInProcess` (onnxEmbedder.ts) on this thread, or `loadInWorker`
   * (workerEmbedder.ts) in a worker thread, as the extension does.
   */
  readonly loadModel: LocalModelLoader;
  /**
   * Work on this thread (the needs models, the spelling lists) starts once this settles, while the model
   * starts loading at once: the extension lets its servers be asked to start first.
   */
  readonly after?: Promise<unknown>;
}

export interface SelectionEngine {
  readonly selector: ToolSelector;
  readonly index?: ToolIndex;
  /** Why there is no embedder, when there is none. */
  readonly embedderProblem?: string;
  /** Why the configured model folder gave way to the bundled model, when it did. */
  readonly embedderFallback?: string;
  /** Exposed name → why the tool is quarantined; search must leave these out of its ranking too. */
  readonly quarantine?: () => ReadonlyMap<string, string>;
  /**
   * Another selector over the same index, options and quarantine, with other usage hints (none when
   * undefined), for coverage replay. Give it the main selector's catalogue (`setCatalogue` also sets the
   * shared index's texts).
   */
  createSelector(usage?: UsageHints): ToolSelector;
  /**
   * Writes the tool vectors embedded so far, and the tools' readings, to the cache folder now (they
   * otherwise wait for a quiet moment).
   */
  flush(): Promise<void>;
  /**
   * Starts a local model's session now, so the first prompt does not wait for it (a cached catalogue never
   * needs the model until a prompt comes). Never rejects: a model that fails says so when it is used.
   */
  warmUp(): Promise<void>;
  dispose(): Promise<void>;
}

/** Creates the embedder the settings ask for; throws an EmbeddingError with advice when it cannot. */
export async function createEmbedder(settings: EmbeddingSettings, root: string, loadModel: LocalModelLoader): Promise<Embedder | undefined> {
  switch (settings.provider) {
    case 'none':
      return undefined;
    case 'local': {
      const folder = isBundledModel(settings.model) ? path.join(root, DEFAULT_MODEL_DIR) : path.resolve(root, settings.model);
      return loadModel(folder);
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

/**
 * Like createEmbedder, but a local model folder other than the bundled one must load and run one text
 * first; when it cannot (a broken or half-copied download), the bundled model is used instead and
 * `fallback` says why. The bundled model failing too is thrown as usual.
 */
export async function createEmbedderWithFallback(settings: EmbeddingSettings, root: string, loadModel: LocalModelLoader): Promise<{ embedder: Embedder | undefined; fallback?: string }> {
  if (settings.provider !== 'local' || isBundledModel(settings.model)) return { embedder: await createEmbedder(settings, root, loadModel) };
  let reason: string;
  try {
    const embedder = await loadModel(path.resolve(root, settings.model));
    try {
      // Loading reads the tokenizer and hashes the file; only a run proves onnxruntime accepts the graph.
      await embedder.warmUp();
      return { embedder };
    } catch (error) {
      await embedder.dispose();
      throw error;
    }
  } catch (error) {
    reason = describeError(error);
  }
  const embedder = await createEmbedder({ provider: 'local', model: 'default' }, root, loadModel);
  return { embedder, fallback: `The configured model folder ${settings.model} could not be used, so the bundled default model is used instead. ${reason} Download the model again, or set the model back to "default".` };
}

function isBundledModel(model: string): boolean {
  return model === 'default' || model === '';
}

export async function createSelectionEngine(options: SelectionEngineOptions): Promise<SelectionEngine> {
  const log = options.log ?? (() => undefined);
  let embedder: Embedder | undefined;
  let embedderProblem: string | undefined;
  let embedderFallback: string | undefined;
  const loading = createEmbedderWithFallback(options.embeddings, options.root, options.loadModel);
  const saved = options.cacheFolder ? new SavedReadings(path.join(options.cacheFolder, TOOL_READINGS_FILE), log) : undefined;
  // Our own work on this thread waits for `after`; a worker thread loads the model meanwhile.
  await options.after?.catch(() => undefined);
  const needsRead = loadNeedsWithDigest(options.root, log, options.needsFile);
  const needs = needsRead?.model;
  const spellingWords = loadSpellingWords(options.root, log);
  const readings: ToolReadings = new ToolReadings(needsRead, () => saved?.schedule(readings));
  await saved?.loadInto(readings);
  try {
    ({ embedder, fallback: embedderFallback } = await loading);
    if (embedderFallback) log(embedderFallback);
    if (!embedder) embedderProblem = 'embeddings are turned off (provider "none")';
  } catch (error) {
    embedderProblem = describeError(error);
    log(`The embedder could not be created, so selection uses keywords only: ${embedderProblem}`);
  }
  let index: ToolIndex | undefined;
  let toolEmbedder: Embedder | undefined;
  if (embedder) {
    toolEmbedder = options.cacheFolder ? new CachedEmbedder(embedder, new EmbeddingCache(options.cacheFolder, { log })) : embedder;
    // Prompts go straight to the model: they rarely repeat, and need not be stored anywhere.
    index = new ToolIndex(toolEmbedder, log, embedder);
  }
  // First names, and a local model's own words, are left as written; other embedders give no vocabulary.
  const known = new Set([...(spellingWords?.names ?? []), ...(isLocalModel(embedder) ? embedder.vocabularyWords() : [])]);
  const deps: SelectorDeps = {
    ...(index ? { index } : {}),
    ...(needs ? { needs } : {}),
    ...(spellingWords ? { spelling: { dictionary: spellingWords.dictionary, known } } : {}),
    createLexical: (tools, read) => new LexicalRanker(tools.map(rankableFor), read ? { fieldTerms: read.map((r) => r.fieldTerms) } : {}),
    readings,
    ...(options.quarantine ? { quarantine: options.quarantine } : {}),
  };
  const selectionOptions = { ...DEFAULT_SELECTION_OPTIONS, ...options.selection };
  const selector = new ToolSelector(selectionOptions, { ...deps, ...(options.usage ? { usage: options.usage } : {}) });
  return {
    selector,
    ...(index ? { index } : {}),
    ...(embedderProblem ? { embedderProblem } : {}),
    ...(embedderFallback ? { embedderFallback } : {}),
    ...(options.quarantine ? { quarantine: options.quarantine } : {}),
    createSelector: (usage) => new ToolSelector(selectionOptions, { ...deps, ...(usage ? { usage } : {}) }),
    warmUp: async () => {
      // A local model only: warming an HTTP endpoint would spend a paid request on nothing.
      if (isLocalModel(embedder)) await embedder.warmUp().catch(() => undefined);
    },
    flush: async () => {
      await saved?.flush(readings);
      if (toolEmbedder instanceof CachedEmbedder) await toolEmbedder.flush();
    },
    dispose: async () => {
      index?.dispose();
      await saved?.flush(readings);
      await toolEmbedder?.dispose();
    },
  };
}
