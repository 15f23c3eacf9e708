import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkStructure, collectImports, describeProblems, hasProblems, type FoundImport, type Layer } from '../../scripts/structure.mjs';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const LAYERS: Layer[] = [
  { name: 'low', folders: ['core/low'], why: 'test' },
  { name: 'high', folders: ['core/high', 'core/peer'], why: 'test' },
];

function edge(from: string, to: string, typeOnly = false): FoundImport {
  return { from, to, specifier: to, typeOnly, line: 1 };
}

describe('structure check (scripts/structure.mjs)', () => {
  it('finds no upward import, no cycle and no unplaced folder in src/', function () {
    // Parsing every source file takes a second or two on a busy machine.
    this.timeout(30_000);
    const result = checkStructure(collectImports(REPO_ROOT));
    assert.ok(result.files.length > 0);
    assert.deepEqual(describeProblems(result), [], 'run `npm run structure` for the same list');
  });

  it('reports an import into a higher layer, run-time or type-only', () => {
    const files = ['src/core/low/a.ts', 'src/core/low/b.ts', 'src/core/high/c.ts'];
    const result = checkStructure({ files, imports: [edge(files[0]!, files[2]!), edge(files[1]!, files[2]!, true), edge(files[2]!, files[0]!)] }, LAYERS);
    assert.deepEqual(result.upward.map((i) => [i.from, i.to, i.typeOnly]), [[files[0], files[2], false], [files[1], files[2], true]]);
    assert.match(describeProblems(result)[0]!, /upward: src\/core\/low\/a\.ts:1 \(low\) imports src\/core\/high\/c\.ts \(high\)/);
  });

  it('fails on a run-time cycle, and on a type-only cycle only when it crosses folders', () => {
    const [a, b, c, d] = ['src/core/high/a.ts', 'src/core/high/b.ts', 'src/core/high/c.ts', 'src/core/peer/d.ts'];
    const runtime = checkStructure({ files: [a, b], imports: [edge(a, b), edge(b, a)] }, LAYERS);
    assert.deepEqual(runtime.cycles.map((cy) => cy.path), [[a, b, a]]);
    const inFolder = checkStructure({ files: [a, c], imports: [edge(a, c), edge(c, a, true)] }, LAYERS);
    assert.equal(hasProblems(inFolder), false);
    assert.deepEqual(inFolder.typeCycles.map((cy) => cy.files), [[a, c]]);
    const across = checkStructure({ files: [a, d], imports: [edge(a, d), edge(d, a, true)] }, LAYERS);
    assert.equal(hasProblems(across), true);
    assert.equal(across.cycles[0]?.typeOnly, true);
  });

  it('keeps what the panel runs browser-safe: no path from it to a builtin or a package', () => {
    const [view, helper] = ['src/webview/view.ts', 'src/core/util/helper.ts'];
    const imports = [edge(view, helper), { from: helper, specifier: 'node:fs', external: 'node:fs', typeOnly: false, line: 1 }];
    const result = checkStructure({ files: [view, helper], imports });
    assert.deepEqual(result.browserUnsafe, [{ chain: [view, helper], external: 'node:fs' }]);
    const typesOnly = checkStructure({ files: [view, helper], imports: [edge(view, helper, true), imports[1]!] });
    assert.deepEqual(typesOnly.browserUnsafe, []);
  });

  it('names a folder that is in no layer', () => {
    const result = checkStructure({ files: ['src/core/new/x.ts'], imports: [] }, LAYERS);
    assert.deepEqual(result.unplaced, ['core/new']);
  });

  it('tells type-only imports from run-time ones, and follows re-exports and import()', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'structure-'));
    try {
      fs.mkdirSync(path.join(root, 'src/core/low'), { recursive: true });
      const write = (name: string, text: string): void => fs.writeFileSync(path.join(root, 'src/core/low', name), text);
      write('t.ts', 'export type T = number;\nexport const v = 1;\n');
      write('a.ts', [
        "import type { T } from './t';",
        "import { type T as U } from './t';",
        "import { v, type T as W } from './t';",
        "export type { T as X } from './t';",
        "export { v as y } from './t';",
        "type Z = import('./t').T;",
        "const later = import('./t');",
        "import fs from 'node:fs';",
      ].join('\n'));
      const graph = collectImports(root);
      const fromA = graph.imports.filter((i) => i.from === 'src/core/low/a.ts').map((i) => [i.to ?? i.external, i.typeOnly]);
      const t = 'src/core/low/t.ts';
      assert.deepEqual(fromA, [[t, true], [t, true], [t, false], [t, true], [t, false], [t, true], [t, false], ['node:fs', false]]);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
