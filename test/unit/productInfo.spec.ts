import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PRODUCT_NAME, productInfo, readVersion } from '../../src/core/util/productInfo';

const manifest = JSON.parse(readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as { name: string; version: string };

describe('product info', () => {
  it("tells MCP peers package.json's name and version", () => {
    assert.equal(PRODUCT_NAME, manifest.name);
    assert.deepEqual(productInfo(), { name: manifest.name, version: manifest.version });
  });

  describe('readVersion', () => {
    let root: string;
    beforeEach(() => {
      root = mkdtempSync(path.join(os.tmpdir(), 'product-info-'));
    });
    afterEach(() => rmSync(root, { recursive: true, force: true }));

    it('finds our package.json a few folders up, past another package and an unreadable one', () => {
      writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: PRODUCT_NAME, version: '9.8.7' }));
      const dist = path.join(root, 'out', 'test', 'extension');
      mkdirSync(dist, { recursive: true });
      writeFileSync(path.join(root, 'out', 'package.json'), JSON.stringify({ name: 'something-else', version: '1.0.0' }));
      writeFileSync(path.join(dist, 'package.json'), '{ not json');
      assert.equal(readVersion(dist), '9.8.7');
    });

    it('gives undefined when none of ours is near (the caller then says "dev")', () => {
      const deep = path.join(root, 'a', 'b', 'c', 'd', 'e');
      mkdirSync(deep, { recursive: true });
      writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: PRODUCT_NAME, version: '9.8.7' }));
      assert.equal(readVersion(deep), undefined, 'too far up');
      writeFileSync(path.join(deep, 'package.json'), JSON.stringify({ name: PRODUCT_NAME }));
      assert.equal(readVersion(deep), undefined, 'ours, without a version');
    });
  });
});
