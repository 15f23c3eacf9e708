import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { NEEDS_FILE, NEEDS_SETTINGS, trainNeeds } from '../../scripts/model/trainNeeds';
import { OnnxEmbedder } from '../../src/core/embedding/onnxEmbedder';
import { storeNeedsFile } from '../../src/core/selection/generalNeeds';

const MODEL_DIR = path.resolve(__dirname, '..', '..', 'media', 'model');

describe('the shipped unnamed-needs models', function () {
  // Training reads 15,000 prompts and embeds them with the real model: about 20 s on a quiet 2-core machine.
  this.timeout(240_000);

  it('are what `npm run train:needs` makes from the data and the code as they are', async () => {
    // The features come from lexicalTerms and the prompt shapes: a change there silently retires weights
    // the shipped file still holds, until the file is trained again.
    const embedder = await OnnxEmbedder.load(MODEL_DIR);
    try {
      const trained = `${JSON.stringify(storeNeedsFile(await trainNeeds(NEEDS_SETTINGS, embedder)))}\n`;
      assert.ok(trained === fs.readFileSync(NEEDS_FILE, 'utf8'), 'media/needs/general-needs.json is stale: run `npm run train:needs`, then measure with `npm run eval:select -- --quick`');
    } finally {
      await embedder.dispose();
    }
  });
});
