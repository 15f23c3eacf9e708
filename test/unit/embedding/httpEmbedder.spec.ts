import assert from 'node:assert/strict';
import {
  HTTP_BATCH_SIZE, HttpEmbedder, MAX_ATTEMPTS, embeddingsUrl, retryAfterMs, type HttpEmbedderOptions, type RetryEvent,
} from '../../../src/core/embedding/httpEmbedder';
import { closedPortBase, sendJson, startLocalServer, type LocalServer, type ScriptedHandler } from './localHttpServer';
import { rejectsWith } from './embeddingAssertions';

const API_KEY = 'sk-test-7f3a9c1e5b';


function approx(actual: Float32Array, expected: number[]): void {
  assert.equal(actual.length, expected.length);
  expected.forEach((x, i) => assert.ok(Math.abs(actual[i]! - x) < 1e-6, `[${i}] ${actual[i]} vs ${x}`));
}

/** A vector that identifies its text, so order can be checked: [length, 1]. */
function vectorFor(text: string): number[] {
  return [text.length, 1];
}

describe('HttpEmbedder', () => {
  let server: LocalServer | undefined;
  const embedders: HttpEmbedder[] = [];

  async function serve(handler: ScriptedHandler): Promise<LocalServer> {
    server = await startLocalServer(handler);
    return server;
  }

  function embedder(options: Partial<HttpEmbedderOptions> & Pick<HttpEmbedderOptions, 'endpoint'>): HttpEmbedder {
    const e = new HttpEmbedder({ api: 'ollama', model: 'nomic-embed-text', retryBaseDelayMs: 1, ...options });
    embedders.push(e);
    return e;
  }

  afterEach(async () => {
    for (const e of embedders.splice(0)) await e.dispose();
    await server?.close();
    server = undefined;
  });

  describe('Ollama', () => {
    it('posts {model, input} to /api/embed and normalises {embeddings}', async () => {
      const s = await serve((_req, res) => sendJson(res, 200, { model: 'nomic-embed-text', embeddings: [[3, 4], [0, 2]] }));
      const e = embedder({ endpoint: s.base });
      assert.equal(e.dimension, 0);
      const [a, b] = await e.embed(['read a file', 'search the web']);
      approx(a!, [0.6, 0.8]);
      approx(b!, [0, 1]);
      assert.equal(e.dimension, 2);
      assert.equal(s.requests.length, 1);
      assert.equal(s.requests[0]!.method, 'POST');
      assert.equal(s.requests[0]!.path, '/api/embed');
      assert.deepEqual(JSON.parse(s.requests[0]!.body), { model: 'nomic-embed-text', input: ['read a file', 'search the web'] });
      assert.equal(s.requests[0]!.headers['authorization'], undefined, 'no key, no header');
      assert.equal(e.modelId, `http:ollama:${new URL(s.base).host}:nomic-embed-text`);
    });

    it(`sends at most ${HTTP_BATCH_SIZE} texts per request and keeps the input order`, async () => {
      const s = await serve((req, res) => {
        const { input } = JSON.parse(req.body) as { input: string[] };
        sendJson(res, 200, { embeddings: input.map(vectorFor) });
      });
      const texts = Array.from({ length: HTTP_BATCH_SIZE * 2 + 22 }, (_, i) => 'x'.repeat(i + 1));
      const vectors = await embedder({ endpoint: s.base }).embed(texts);
      assert.deepEqual(s.requests.map((r) => (JSON.parse(r.body) as { input: string[] }).input.length), [HTTP_BATCH_SIZE, HTTP_BATCH_SIZE, 22]);
      vectors.forEach((v, i) => {
        const n = Math.hypot(i + 1, 1);
        approx(v, [(i + 1) / n, 1 / n]);
      });
    });

    it('makes no request for no texts', async () => {
      const s = await serve((_req, res) => sendJson(res, 500, {}));
      assert.deepEqual(await embedder({ endpoint: s.base }).embed([]), []);
      assert.equal(s.requests.length, 0);
    });

    it('says to pull the model when Ollama answers 404', async () => {
      const s = await serve((_req, res) => sendJson(res, 404, { error: 'model "nomic-embed-text" not found, try pulling it first' }));
      await rejectsWith(embedder({ endpoint: s.base }).embed(['x']), 'BAD_RESPONSE', /HTTP 404/, /not found, try pulling it first/, /ollama pull nomic-embed-text/);
      assert.equal(s.requests.length, 1, 'a 4xx is not retried');
    });
  });

  describe('OpenAI-compatible', () => {
    it('posts to {base}/embeddings after /v1, sends the key, and orders {data} by index', async () => {
      const s = await serve((_req, res) => sendJson(res, 200, {
        object: 'list',
        data: [{ object: 'embedding', index: 1, embedding: [0, 5] }, { object: 'embedding', index: 0, embedding: [1, 0] }],
        model: 'text-embedding-3-small',
      }));
      const e = embedder({ api: 'openai', endpoint: `${s.base}/v1`, model: 'text-embedding-3-small', apiKey: API_KEY });
      const [a, b] = await e.embed(['first', 'second']);
      approx(a!, [1, 0]);
      approx(b!, [0, 1]);
      assert.equal(s.requests[0]!.path, '/v1/embeddings');
      assert.equal(s.requests[0]!.headers['authorization'], `Bearer ${API_KEY}`);
      assert.deepEqual(JSON.parse(s.requests[0]!.body), { model: 'text-embedding-3-small', input: ['first', 'second'] });
      assert.equal(e.modelId, `http:openai:${new URL(s.base).host}:text-embedding-3-small`);
    });

    it('reads base64 embeddings (little-endian float32)', async () => {
      const s = await serve((_req, res) => sendJson(res, 200, { data: [{ index: 0, embedding: Buffer.from(new Float32Array([0, 3, 4]).buffer).toString('base64') }] }));
      const [v] = await embedder({ api: 'openai', endpoint: s.base, model: 'm' }).embed(['x']);
      approx(v!, [0, 0.6, 0.8]);
      assert.equal(s.requests[0]!.path, '/v1/embeddings');
    });
  });

  describe('retries', () => {
    it('retries a 429 after the Retry-After the server asked for, then succeeds', async () => {
      const s = await serve((_req, res, i) => {
        if (i === 0) sendJson(res, 429, { error: 'slow down' }, { 'retry-after': '0.03' });
        else sendJson(res, 200, { embeddings: [[1, 0]] });
      });
      const retries: RetryEvent[] = [];
      const [v] = await embedder({ endpoint: s.base, onRetry: (event) => retries.push(event) }).embed(['x']);
      approx(v!, [1, 0]);
      assert.equal(s.requests.length, 2);
      assert.deepEqual(retries, [{ attempt: 1, delayMs: 30, reason: 'HTTP 429' }]);
    });

    it(`retries a 500 with doubling backoff, then gives up after ${MAX_ATTEMPTS} attempts with the server's message`, async () => {
      const s = await serve((_req, res) => sendJson(res, 500, { error: 'llama runner crashed' }));
      const retries: RetryEvent[] = [];
      const error = await rejectsWith(embedder({ endpoint: s.base, onRetry: (event) => retries.push(event) }).embed(['x']), 'ENDPOINT_UNAVAILABLE',
        /Ollama at http:\/\/127\.0\.0\.1:\d+\/api\/embed kept failing \(HTTP 500\)/, new RegExp(`after ${MAX_ATTEMPTS} attempts`), /llama runner crashed/);
      assert.equal(s.requests.length, MAX_ATTEMPTS);
      assert.deepEqual(retries.map((r) => r.delayMs), [1, 2, 4]);
      assert.ok(error.message.length < 400, 'a readable message');
    });

    it('retries a dropped connection', async () => {
      const s = await serve((_req, res, i) => {
        if (i === 0) res.socket?.destroy();
        else sendJson(res, 200, { embeddings: [[0, 1]] });
      });
      const retries: RetryEvent[] = [];
      const [v] = await embedder({ endpoint: s.base, onRetry: (event) => retries.push(event) }).embed(['x']);
      approx(v!, [0, 1]);
      assert.equal(retries.length, 1);
      assert.match(retries[0]!.reason, /ECONNRESET|UND_ERR_SOCKET|other side closed/);
    });

    it('gives up at once when Retry-After asks for longer than it will wait', async () => {
      const s = await serve((_req, res) => sendJson(res, 503, 'busy', { 'retry-after': '3600' }));
      await rejectsWith(embedder({ endpoint: s.base }).embed(['x']), 'ENDPOINT_UNAVAILABLE', /HTTP 503/, /retry after 3600 s/);
      assert.equal(s.requests.length, 1);
    });

    it('reads Retry-After as seconds or as an HTTP date', () => {
      assert.equal(retryAfterMs('2'), 2000);
      assert.equal(retryAfterMs(' 0.25 '), 250);
      const now = Date.parse('2026-01-01T00:00:00Z');
      assert.equal(retryAfterMs('Thu, 01 Jan 2026 00:00:05 GMT', now), 5000);
      assert.equal(retryAfterMs('Wed, 31 Dec 2025 23:00:00 GMT', now), 0, 'a date in the past means now');
      assert.equal(retryAfterMs('soon'), undefined);
      assert.equal(retryAfterMs('-1'), undefined);
      assert.equal(retryAfterMs(null), undefined);
    });
  });

  describe('failures', () => {
    it('says the endpoint is down, where, and what to do, without retrying', async () => {
      const base = (await closedPortBase()).replace('127.0.0.1', 'localhost'); // localhost: one refusal per address family
      const retries: RetryEvent[] = [];
      const error = await rejectsWith(embedder({ endpoint: base, onRetry: (event) => retries.push(event) }).embed(['x']), 'ENDPOINT_UNAVAILABLE',
        /^Ollama is not reachable at http:\/\/localhost:\d+\/api\/embed \(ECONNREFUSED\); start Ollama/, /check toolRouter\.embeddings\.endpoint/);
      assert.deepEqual(retries, []);
      assert.ok(error.message.includes(base));
    });

    it('times out a server that does not answer', async () => {
      const s = await serve(() => undefined); // never answers
      await rejectsWith(embedder({ endpoint: s.base, timeoutMs: 100 }).embed(['x']), 'TIMEOUT', /did not answer within 100 ms/, /nomic-embed-text/);
      assert.equal(s.requests.length, 1, 'a timeout is not retried');
    });

    it('times out a server that stops in the middle of the body', async () => {
      const s = await serve((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"embeddings": [[1, ');
      });
      await rejectsWith(embedder({ endpoint: s.base, timeoutMs: 100 }).embed(['x']), 'TIMEOUT');
    });

    it('reports a body that is not JSON as BAD_RESPONSE, quoting it', async () => {
      const s = await serve((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html>proxy login</html>');
      });
      await rejectsWith(embedder({ endpoint: s.base }).embed(['x']), 'BAD_RESPONSE', /not JSON/, /proxy login/, /toolRouter\.embeddings\.endpoint/);
    });

    it('reports JSON of the wrong shape as BAD_RESPONSE', async () => {
      const answers: unknown[] = [
        { embedding: [1, 2] }, // the older /api/embeddings answer
        { embeddings: [[1, 2]] }, // one vector for two texts
        { embeddings: [[1, 'a'], [1, 2]] },
        { embeddings: [[1, 2], [1, 2, 3]] },
        { embeddings: [[], []] },
      ];
      const s = await serve((_req, res, i) => sendJson(res, 200, answers[i]));
      const e = embedder({ endpoint: s.base });
      await rejectsWith(e.embed(['a', 'b']), 'BAD_RESPONSE', /without an "embeddings" array/);
      await rejectsWith(e.embed(['a', 'b']), 'BAD_RESPONSE', /1 embeddings for 2 texts/);
      await rejectsWith(e.embed(['a', 'b']), 'BAD_RESPONSE', /not a non-empty list of numbers/);
      await rejectsWith(e.embed(['a', 'b']), 'BAD_RESPONSE', /different lengths/);
      await rejectsWith(e.embed(['a', 'b']), 'BAD_RESPONSE', /not a non-empty list of numbers/);
    });

    it('reports OpenAI data with bad indices as BAD_RESPONSE', async () => {
      const s = await serve((_req, res) => sendJson(res, 200, { data: [{ index: 0, embedding: [1] }, { index: 0, embedding: [2] }] }));
      await rejectsWith(embedder({ api: 'openai', endpoint: s.base, model: 'm' }).embed(['a', 'b']), 'BAD_RESPONSE', /repeated or out-of-range index/);
    });

    it('refuses vectors whose length changes between calls (the model changed under its name)', async () => {
      const s = await serve((_req, res, i) => sendJson(res, 200, { embeddings: [i === 0 ? [1, 2] : [1, 2, 3]] }));
      const e = embedder({ endpoint: s.base });
      await e.embed(['a']);
      await rejectsWith(e.embed(['a']), 'BAD_RESPONSE', /3-dimensional embeddings after 2-dimensional/);
    });

    it('sends the API key but never puts it in a message, even when the server echoes it', async () => {
      const statuses = [401, 500, 200];
      const s = await serve((req, res, i) => {
        const echoed = `bad key ${String(req.headers['authorization'])}`;
        if (statuses[i] === 200) sendJson(res, 200, `not json ${echoed}`);
        else sendJson(res, statuses[i]!, { error: echoed });
      });
      const e = embedder({ api: 'openai', endpoint: s.base, model: 'm', apiKey: API_KEY, maxAttempts: 1 });
      const errors = [
        await rejectsWith(e.embed(['a']), 'ENDPOINT_UNAVAILABLE', /HTTP 401/, /check the API key/),
        await rejectsWith(e.embed(['a']), 'ENDPOINT_UNAVAILABLE', /HTTP 500/, /on the only attempt/),
        await rejectsWith(e.embed(['a']), 'BAD_RESPONSE', /not JSON/),
      ];
      for (const error of errors) {
        assert.ok(!error.message.includes(API_KEY), error.message);
        assert.match(error.message, /Bearer \[redacted\]/);
        assert.ok(!String(error.cause ?? '').includes(API_KEY));
      }
      assert.ok(s.requests.every((r) => r.headers['authorization'] === `Bearer ${API_KEY}`));
    });

    it('rejects with CANCELLED when the caller aborts or the embedder is disposed mid-request', async () => {
      const s = await serve(() => undefined);
      const e = embedder({ endpoint: s.base });
      const controller = new AbortController();
      const pending = e.embed(['x'], controller.signal);
      setTimeout(() => controller.abort(), 20);
      await rejectsWith(pending, 'CANCELLED');
      const second = e.embed(['x']);
      setTimeout(() => void e.dispose(), 20);
      await rejectsWith(second, 'CANCELLED', /disposed/);
      await rejectsWith(e.embed(['x']), 'CANCELLED', /disposed/);
    });

    it('rejects a bad endpoint or API name when constructed', () => {
      assert.throws(() => new HttpEmbedder({ api: 'ollama', endpoint: 'localhost:11434', model: 'm' }), /not an HTTP URL scheme|not a URL/);
      assert.throws(() => new HttpEmbedder({ api: 'ollama', endpoint: 'not a url', model: 'm' }), /not a URL/);
      assert.throws(() => new HttpEmbedder({ api: 'cohere' as 'openai', endpoint: 'http://x', model: 'm' }), /Unknown embeddings API "cohere"/);
      assert.throws(() => new HttpEmbedder({ api: 'ollama', endpoint: 'http://x', model: '' }), /needs a model name/);
    });
  });

  describe('embeddingsUrl', () => {
    const cases: Array<[HttpEmbedderOptions['api'], string, string]> = [
      ['ollama', 'http://localhost:11434', 'http://localhost:11434/api/embed'],
      ['ollama', 'http://localhost:11434/', 'http://localhost:11434/api/embed'],
      ['ollama', 'http://localhost:11434/api', 'http://localhost:11434/api/embed'],
      ['ollama', 'http://localhost:11434/api/embed', 'http://localhost:11434/api/embed'],
      ['ollama', 'https://gpu.example/ollama/', 'https://gpu.example/ollama/api/embed'],
      ['openai', 'https://api.openai.com/v1', 'https://api.openai.com/v1/embeddings'],
      ['openai', 'https://api.openai.com', 'https://api.openai.com/v1/embeddings'],
      ['openai', 'http://localhost:1234/v1/', 'http://localhost:1234/v1/embeddings'],
      ['openai', 'https://x.example/openai/deployments/e/embeddings?api-version=2024-02-01', 'https://x.example/openai/deployments/e/embeddings?api-version=2024-02-01'],
    ];
    for (const [api, endpoint, expected] of cases) {
      it(`${api}: ${endpoint} → ${expected}`, () => assert.equal(embeddingsUrl(api, endpoint).href, expected));
    }
  });
});
