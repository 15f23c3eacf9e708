/** Writes the embedding cache in a loop until killed; run by cacheCases.ts, which SIGKILLs it mid-write. */
import { EmbeddingCache } from '../../src/core/embedding/embeddingCache';
import { expectedVector, CACHE_TEST_MODEL } from './cacheVectors';

const folder = process.argv[2]!;

async function writeForever(): Promise<void> {
  const cache = new EmbeddingCache(folder);
  for (let round = 0; ; round++) {
    const texts = Array.from({ length: 500 }, (_, i) => `tool text ${round}-${i}`);
    await cache.put(CACHE_TEST_MODEL, texts, texts.map(expectedVector));
    await cache.flush();
    if (round === 0) process.stdout.write('flushed\n');
  }
}

void writeForever();
