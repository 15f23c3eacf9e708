import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { brotliCompressSync, constants as zlib } from 'node:zlib';
import { readBundledBytes } from '../../../src/core/util/bundledText';
import { GENERAL_NEEDS_FILE, SPELLING_NAMES_FILE, SPELLING_WORDS_FILE, loadGeneralNeeds, loadSpellingWords, readBundledText } from '../../../src/core/selection/selectionEngine';

const ROOT = path.resolve(__dirname, '..', '..', '..');

/**
 * Brotli's lowest quality: the test is about reading `.br` files, not their size, and the default (11)
 * took 2-5 s to pack these 1.5 MB on a busy two-core machine.
 */
const FAST_BROTLI = { params: { [zlib.BROTLI_PARAM_QUALITY]: zlib.BROTLI_MIN_QUALITY } };

/** A root laid out as the VSIX has it: the large data files only as `<file>.br`. */
function packedRoot(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bundled-data-'));
  for (const file of [GENERAL_NEEDS_FILE, SPELLING_WORDS_FILE]) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, `${file}.br`), brotliCompressSync(fs.readFileSync(path.join(ROOT, file)), FAST_BROTLI));
  }
  fs.copyFileSync(path.join(ROOT, SPELLING_NAMES_FILE), path.join(root, SPELLING_NAMES_FILE));
  return root;
}

describe('bundled data files', () => {
  it('reads a file shipped only as <file>.br the same as the plain one', function () {
    // Loads the needs and the spelling dictionary twice each (~0.3 s idle); a loaded machine is several times slower.
    this.timeout(15_000);
    const root = packedRoot();
    try {
      assert.ok(!fs.existsSync(path.join(root, GENERAL_NEEDS_FILE)));
      assert.equal(readBundledText(path.join(root, GENERAL_NEEDS_FILE)), fs.readFileSync(path.join(ROOT, GENERAL_NEEDS_FILE), 'utf8'));
      const logged: string[] = [];
      const needs = loadGeneralNeeds(root, (m) => logged.push(m));
      assert.ok(needs, logged.join('\n'));
      assert.deepEqual(
        needs.promptNeeds('save the summary as notes.md').map((n) => n.kind),
        loadGeneralNeeds(ROOT)!.promptNeeds('save the summary as notes.md').map((n) => n.kind),
      );
      const words = loadSpellingWords(root, (m) => logged.push(m));
      assert.ok(words && words.dictionary.size === loadSpellingWords(ROOT)!.dictionary.size, logged.join('\n'));
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('prefers the plain file when both are there', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bundled-data-'));
    try {
      const file = path.join(root, 'data.txt');
      fs.writeFileSync(file, 'plain');
      fs.writeFileSync(`${file}.br`, brotliCompressSync(Buffer.from('compressed')));
      assert.equal(readBundledText(file), 'plain');
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('names a .br file that is not brotli data, and the loader turns its stage off with the reason', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bundled-data-'));
    try {
      fs.mkdirSync(path.dirname(path.join(root, GENERAL_NEEDS_FILE)), { recursive: true });
      fs.writeFileSync(path.join(root, `${GENERAL_NEEDS_FILE}.br`), 'not brotli at all');
      assert.throws(() => readBundledText(path.join(root, GENERAL_NEEDS_FILE)), /general-needs\.json\.br is not brotli-compressed data/);
      const logged: string[] = [];
      assert.equal(loadGeneralNeeds(root, (m) => logged.push(m)), undefined);
      assert.match(logged[0]!, /will not be raised.*general-needs\.json\.br is not brotli-compressed data.*Reinstall the extension/s);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('still says a missing file is missing', () => {
    assert.throws(() => readBundledText(path.join(os.tmpdir(), 'no-such-folder-xyz', 'words.txt')), /ENOENT/);
  });

  it('reads bytes the same way: plain first, else <file>.br unpacked, else the plain file\'s ENOENT', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bundled-data-'));
    try {
      const file = path.join(root, 'tokenizer.json');
      fs.writeFileSync(`${file}.br`, brotliCompressSync(Buffer.from('{"packed":true}')));
      assert.equal((await readBundledBytes(file)).toString('utf8'), '{"packed":true}');
      fs.writeFileSync(file, '{"plain":true}');
      assert.equal((await readBundledBytes(file)).toString('utf8'), '{"plain":true}');
      await assert.rejects(readBundledBytes(path.join(root, 'missing.json')), /ENOENT/);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
