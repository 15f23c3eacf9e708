/**
 * The remote provider: an Ollama (`POST {base}/api/embed`) or OpenAI-compatible (`POST {base}/v1/embeddings`)
 * endpoint behind the same seam as the local engine. Requests are batched, bounded in time, retried on
 * 429 and 5xx with backoff (honouring Retry-After), and every failure becomes an EmbeddingError that says
 * which endpoint failed and what to do. The API key goes in the Authorization header and nowhere else.
 */
import { networkErrorCode, networkErrorDetail } from './errorDetails';
import { EmbeddingError, l2Normalize, type Embedder } from './embedder';
import { isRecord } from '../util/isRecord';

export type EmbeddingApi = 'ollama' | 'openai';

/**
 * Texts per request: a large catalogue takes few requests, yet a CPU-only Ollama answers one batch well
 * within the timeout.
 */
export const HTTP_BATCH_SIZE = 64;
/** Per request. Ollama's first request loads the model into memory, which takes seconds on a laptop. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
/** One try and three retries: rides out a restart or a short rate limit without hiding an outage. */
export const MAX_ATTEMPTS = 4;
/** First backoff when the server gives no Retry-After; doubled on each retry (0.5 s, 1 s, 2 s). */
export const RETRY_BASE_DELAY_MS = 500;
/** Longest wait we accept from Retry-After; a server asking for more is treated as unavailable now. */
export const MAX_RETRY_DELAY_MS = 30_000;
/** Characters of a response body quoted in an error: enough to show the server's own message. */
export const RESPONSE_SNIPPET_CHARS = 200;

export interface HttpEmbedderOptions {
  readonly api: EmbeddingApi;
  /** Base URL (`http://localhost:11434`, `https://api.openai.com/v1`), or the full embeddings URL. */
  readonly endpoint: string;
  /** Model name as the endpoint knows it (`nomic-embed-text`, `text-embedding-3-small`). */
  readonly model: string;
  /** Sent as `Authorization: Bearer …`; never logged and never part of an error message. */
  readonly apiKey?: string;
  readonly timeoutMs?: number;
  readonly maxAttempts?: number;
  readonly retryBaseDelayMs?: number;
  readonly batchSize?: number;
  /** Defaults to the global fetch; the extension may pass one that honours the editor's proxy. */
  readonly fetchImpl?: typeof fetch;
  /** Told before each retry: for the output channel. */
  readonly onRetry?: (event: RetryEvent) => void;
}

export interface RetryEvent {
  /** The attempt that failed, from 1. */
  readonly attempt: number;
  readonly delayMs: number;
  /** `HTTP 429`, `HTTP 503`, or a network error code. */
  readonly reason: string;
}

/** Network error codes that mean the endpoint is not there at all: retrying only delays the message. */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

export class HttpEmbedder implements Embedder {
  readonly modelId: string;
  /** The URL the requests go to. */
  readonly url: string;
  private dim = 0;
  private readonly disposal = new AbortController();
  private readonly fetchImpl: typeof fetch;
  /** The URL without credentials or query, for messages. */
  private readonly shownUrl: string;
  private readonly serviceName: string;

  constructor(private readonly options: HttpEmbedderOptions) {
    if (options.api !== 'ollama' && options.api !== 'openai') {
      throw new TypeError(`Unknown embeddings API "${String(options.api)}"; use "ollama" or "openai".`);
    }
    if (!options.model) throw new TypeError('An embeddings endpoint needs a model name (for Ollama, e.g. "nomic-embed-text").');
    const url = embeddingsUrl(options.api, options.endpoint);
    this.url = url.href;
    this.shownUrl = `${url.origin}${url.pathname}`;
    this.modelId = `http:${options.api}:${url.host}:${options.model}`;
    this.serviceName = options.api === 'ollama' ? 'Ollama' : 'The OpenAI-compatible endpoint';
    this.fetchImpl = options.fetchImpl ?? fetch;
  }

  /** Vector length: 0 until the first answer. */
  get dimension(): number {
    return this.dim;
  }

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    this.checkUsable(signal);
    const batchSize = Math.max(1, this.options.batchSize ?? HTTP_BATCH_SIZE);
    const results: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += batchSize) {
      results.push(...(await this.embedBatch(texts.slice(start, start + batchSize), signal)));
    }
    return results;
  }

  async dispose(): Promise<void> {
    this.disposal.abort();
  }

  private async embedBatch(texts: readonly string[], signal: AbortSignal | undefined): Promise<Float32Array[]> {
    const maxAttempts = Math.max(1, this.options.maxAttempts ?? MAX_ATTEMPTS);
    const baseDelay = this.options.retryBaseDelayMs ?? RETRY_BASE_DELAY_MS;
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.request(texts, signal);
      if (outcome.ok) return this.parse(outcome.body, texts.length);
      const { retryable, retryAfter, reason } = outcome;
      if (!retryable || attempt >= maxAttempts) throw outcome.error(attempt);
      const delayMs = retryAfter ?? baseDelay * 2 ** (attempt - 1);
      if (delayMs > MAX_RETRY_DELAY_MS) {
        throw new EmbeddingError('ENDPOINT_UNAVAILABLE', `${this.serviceName} at ${this.shownUrl} answered ${reason} and asks to retry after ${Math.round(delayMs / 1000)} s; try again later.`);
      }
      this.options.onRetry?.({ attempt, delayMs, reason });
      await this.sleep(delayMs, signal);
    }
  }

  /** One HTTP exchange, classified: a body to parse, or a failure that may be retried. */
  private async request(texts: readonly string[], signal: AbortSignal | undefined): Promise<RequestOutcome> {
    const timeoutMs = this.options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signals = [this.disposal.signal, timeout, ...(signal ? [signal] : [])];
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (this.options.apiKey) headers['authorization'] = `Bearer ${this.options.apiKey}`;
    const onAbort = (error: unknown): EmbeddingError => {
      this.checkUsable(signal);
      if (timeout.aborted) {
        return new EmbeddingError('TIMEOUT', `${this.serviceName} at ${this.shownUrl} did not answer within ${formatSeconds(timeoutMs)}. It may still be loading "${this.options.model}"; try again, or allow a longer timeout.`, { cause: error });
      }
      return new EmbeddingError('CANCELLED', 'Embedding was cancelled.', { cause: error });
    };
    let status: number;
    let body: string;
    let retryAfterHeader: string | null;
    try {
      const response = await this.fetchImpl(this.url, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: this.options.model, input: texts }),
        signal: AbortSignal.any(signals),
      });
      status = response.status;
      retryAfterHeader = response.headers.get('retry-after');
      body = await response.text();
    } catch (error) {
      if (signals.some((s) => s.aborted)) throw onAbort(error);
      const code = networkErrorCode(error);
      const detail = this.redact(networkErrorDetail(error));
      const unreachable = code === undefined || UNREACHABLE_CODES.has(code);
      const startHint = this.options.api === 'ollama' ? 'start Ollama (`ollama serve`)' : 'start the server';
      return {
        ok: false,
        retryable: !unreachable,
        retryAfter: undefined,
        reason: detail,
        error: (attempts) => new EmbeddingError('ENDPOINT_UNAVAILABLE', unreachable
          ? `${this.serviceName} is not reachable at ${this.shownUrl} (${detail}); ${startHint} or check toolRouter.embeddings.endpoint.`
          : `${this.serviceName} at ${this.shownUrl} dropped the connection (${detail}) ${attemptsText(attempts)}; check that it is running and healthy.`, { cause: code ? undefined : error }),
      };
    }
    if (status >= 200 && status < 300) return { ok: true, body };

    const reason = `HTTP ${status}`;
    const snippet = this.snippet(body);
    const retryable = status === 429 || status >= 500;
    const retryAfter = retryable ? retryAfterMs(retryAfterHeader) : undefined;
    return {
      ok: false,
      retryable,
      retryAfter,
      reason,
      error: (attempts) => {
        if (status === 429) {
          return new EmbeddingError('ENDPOINT_UNAVAILABLE', `${this.serviceName} at ${this.shownUrl} is rate limiting (HTTP 429) ${attemptsText(attempts)}${snippet}; wait a little and try again.`);
        }
        if (status >= 500) {
          return new EmbeddingError('ENDPOINT_UNAVAILABLE', `${this.serviceName} at ${this.shownUrl} kept failing (HTTP ${status}) ${attemptsText(attempts)}${snippet}; check its log.`);
        }
        if (status === 401 || status === 403) {
          return new EmbeddingError('ENDPOINT_UNAVAILABLE', `${this.serviceName} at ${this.shownUrl} refused the request (HTTP ${status})${snippet}; check the API key for this endpoint.`);
        }
        const pull = this.options.api === 'ollama' && status === 404 ? ` If the model is missing, run \`ollama pull ${this.options.model}\`.` : '';
        return new EmbeddingError('BAD_RESPONSE', `${this.serviceName} at ${this.shownUrl} rejected the request for model "${this.options.model}" (HTTP ${status})${snippet}.${pull} Check toolRouter.embeddings.endpoint and the model name.`);
      },
    };
  }

  private parse(body: string, expected: number): Float32Array[] {
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      throw this.badResponse(`something that is not JSON${this.snippet(body)}`);
    }
    const raw = this.options.api === 'ollama' ? this.ollamaVectors(json) : this.openAiVectors(json, expected);
    if (raw.length !== expected) throw this.badResponse(`${raw.length} embeddings for ${expected} texts`);
    const vectors = raw.map((v, i) => this.toVector(v, i));
    const dim = vectors[0]?.length ?? this.dim;
    for (const v of vectors) {
      if (v.length !== dim) throw this.badResponse(`embeddings of different lengths (${dim} and ${v.length})`);
    }
    if (this.dim !== 0 && dim !== this.dim) {
      throw this.badResponse(`${dim}-dimensional embeddings after ${this.dim}-dimensional ones; the model behind "${this.options.model}" changed. Reload to embed everything with the new model`);
    }
    this.dim = dim;
    return vectors.map(l2Normalize);
  }

  private ollamaVectors(json: unknown): unknown[] {
    const embeddings = isRecord(json) ? json['embeddings'] : undefined;
    if (!Array.isArray(embeddings)) throw this.badResponse('JSON without an "embeddings" array (expected {"embeddings": [[…], …]} from /api/embed)');
    return embeddings;
  }

  private openAiVectors(json: unknown, expected: number): unknown[] {
    const data = isRecord(json) ? json['data'] : undefined;
    if (!Array.isArray(data)) throw this.badResponse('JSON without a "data" array (expected {"data": [{"index", "embedding"}, …]})');
    const vectors = new Array<unknown>(data.length);
    data.forEach((item, position) => {
      // Entries carry their own index; servers may answer out of order.
      const index = isRecord(item) && item['index'] !== undefined ? item['index'] : position;
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= Math.max(expected, data.length) || vectors[index] !== undefined) {
        throw this.badResponse(`a data entry with a missing, repeated or out-of-range index (${JSON.stringify(index)})`);
      }
      vectors[index] = isRecord(item) ? item['embedding'] : undefined;
    });
    return vectors;
  }

  private toVector(raw: unknown, index: number): Float32Array {
    if (typeof raw === 'string') {
      // encoding_format "base64": little-endian float32s.
      const bytes = Buffer.from(raw, 'base64');
      if (bytes.length === 0 || bytes.length % 4 !== 0) throw this.badResponse(`embedding ${index} as base64 of ${bytes.length} bytes, not float32s`);
      const v = new Float32Array(bytes.length / 4);
      for (let i = 0; i < v.length; i++) v[i] = bytes.readFloatLE(i * 4);
      return this.checkFinite(v, index);
    }
    if (!Array.isArray(raw) || raw.length === 0 || raw.some((x) => typeof x !== 'number')) {
      throw this.badResponse(`embedding ${index} that is not a non-empty list of numbers`);
    }
    return this.checkFinite(Float32Array.from(raw as number[]), index);
  }

  private checkFinite(v: Float32Array, index: number): Float32Array {
    if (!v.every(Number.isFinite)) throw this.badResponse(`embedding ${index} with values that are not finite`);
    return v;
  }

  private badResponse(what: string): EmbeddingError {
    return new EmbeddingError('BAD_RESPONSE', `${this.serviceName} at ${this.shownUrl} answered with ${what}. Check that toolRouter.embeddings.endpoint points at ${this.options.api === 'ollama' ? 'Ollama' : 'an OpenAI-compatible /embeddings API'} and that "${this.options.model}" is an embedding model.`);
  }

  private snippet(body: string): string {
    const text = this.redact(body.replace(/\s+/g, ' ').trim());
    if (!text) return '';
    return `: "${text.length > RESPONSE_SNIPPET_CHARS ? `${text.slice(0, RESPONSE_SNIPPET_CHARS)}…` : text}"`;
  }

  /** A server may echo the request's headers; the key must still never reach a message. */
  private redact(text: string): string {
    const key = this.options.apiKey;
    return key ? text.replaceAll(key, '[redacted]') : text;
  }

  private checkUsable(signal: AbortSignal | undefined): void {
    if (this.disposal.signal.aborted) throw new EmbeddingError('CANCELLED', `The embedder for ${this.shownUrl} was disposed (the embeddings setting changed or the extension is stopping).`);
    if (signal?.aborted) throw new EmbeddingError('CANCELLED', 'Embedding was cancelled.', { cause: signal.reason });
  }

  private sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve, reject) => {
      const signals = [this.disposal.signal, ...(signal ? [signal] : [])];
      const onAbort = (): void => {
        clearTimeout(timer);
        try {
          this.checkUsable(signal);
        } catch (error) {
          reject(error);
        }
      };
      const timer = setTimeout(() => {
        for (const s of signals) s.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      for (const s of signals) s.addEventListener('abort', onAbort, { once: true });
    });
  }
}

type RequestOutcome =
  | { readonly ok: true; readonly body: string }
  | {
      readonly ok: false;
      readonly retryable: boolean;
      readonly retryAfter: number | undefined;
      readonly reason: string;
      readonly error: (attempts: number) => EmbeddingError;
    };

/**
 * The embeddings URL for a base URL: Ollama's `/api/embed`; for OpenAI-compatible servers `/embeddings`
 * after a versioned base (`…/v1`), else `/v1/embeddings`. A URL that already ends in the path is kept.
 */
export function embeddingsUrl(api: EmbeddingApi, endpoint: string): URL {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new TypeError(`"${endpoint}" is not a URL; set toolRouter.embeddings.endpoint to e.g. http://localhost:11434`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`"${url.protocol}" is not an HTTP URL scheme; set toolRouter.embeddings.endpoint to an http:// or https:// URL`);
  }
  const base = url.pathname.replace(/\/+$/, '');
  if (api === 'ollama') {
    url.pathname = base.endsWith('/api/embed') ? base : base.endsWith('/api') ? `${base}/embed` : `${base}/api/embed`;
  } else {
    url.pathname = base.endsWith('/embeddings') ? base : /\/v\d+$/.test(base) ? `${base}/embeddings` : `${base}/v1/embeddings`;
  }
  return url;
}

/** Retry-After as milliseconds: delay-seconds (fractions accepted) or an HTTP date; undefined if absent or unreadable. */
export function retryAfterMs(header: string | null | undefined, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const text = header.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  // An HTTP date names its weekday and month; anything else (a negative number) is unreadable.
  const date = /[a-z]/i.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}


function attemptsText(attempts: number): string {
  return attempts === 1 ? 'on the only attempt' : `after ${attempts} attempts`;
}

function formatSeconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`;
}

