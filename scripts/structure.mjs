// The structure check (`npm run structure`): src/ keeps its layers and has no import cycles. It reads every
// import in src/, fails listing each one that runs up a layer and each cycle, and writes docs/structure.md.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/**
 * The layers, bottom first. A file may import its own folder, a folder of its own layer, or any layer below;
 * never one above. Every folder of src/ must be placed here, so a new folder is a decision, not an accident.
 */
export const LAYERS = [
  { name: 'errors', folders: ['core/errors'], why: 'Error types and how an error is told: they import nothing, so every file may use them.' },
  { name: 'util', folders: ['core/util'], why: 'Plain helpers (atomic writes, isRecord, token estimates) that know no concern of the router.' },
  { name: 'vocabulary', folders: ['core/policy', 'core/schema'], why: "Plain data in, decisions out: the call policy's verdicts and JSON Schema checks." },
  { name: 'configuration', folders: ['core/config', 'core/auth'], why: 'Which servers exist and how to sign in to them; config reads the call policy setting.' },
  { name: 'connection', folders: ['core/connection'], why: 'One MCP session per server: transports, restarts, its errors.' },
  { name: 'routing', folders: ['core/security', 'core/router'], why: 'One catalogue over every connection: names, calls, and the pins and poisoning checks on what servers list.' },
  { name: 'choice', folders: ['core/embedding', 'core/selection', 'core/learning', 'core/search', 'core/guards'], why: 'What to offer a model and when to stop it: embeddings, ranking, usage memory, search, cost and loop guards.' },
  { name: 'surfaces', folders: ['core/chat', 'core/gateway', 'core/evaluation'], why: 'What a model or a person drives: `@router` turns, the MCP gateway, selection evaluation.' },
  { name: 'panel', folders: ['webview'], why: "The panel's browser script and protocol: it shows the core's types and runs only browser-safe code." },
  { name: 'hosts', folders: ['cli', 'extension'], why: 'Glue that adapts the core to a terminal and to VS Code; the extension serves the panel.' },
];

/** Folders bundled for a browser: their run-time imports must never reach Node, an npm package or vscode. */
export const BROWSER_FOLDERS = ['webview'];

const SOURCE_EXTENSIONS = ['.ts', '.tsx', '.mts'];

/** The folder a file belongs to for layering: `core/<name>` inside src/core, else the top folder of src/. */
export function folderOf(file) {
  const parts = file.split('/');
  if (parts[0] !== 'src' || parts.length < 3) return undefined;
  return parts[1] === 'core' ? (parts.length > 3 ? `core/${parts[2]}` : undefined) : parts[1];
}

/** Every source file under `root/srcDir` and every import in it (runtime or type-only), paths relative to root. */
export function collectImports(root, srcDir = 'src') {
  const files = listSources(path.join(root, srcDir)).map((f) => toPosix(path.relative(root, f))).sort();
  const known = new Set(files);
  const imports = [];
  for (const file of files) {
    const text = fs.readFileSync(path.join(root, file), 'utf8');
    for (const found of importsIn(file, text)) imports.push({ ...found, ...resolveImport(file, found.specifier, known) });
  }
  return { files, imports };
}

/**
 * The check itself, pure: layers from {@link LAYERS}, cycles between files, browser safety. `upward`,
 * `unplaced`, `unresolved`, `cycles` and `browserUnsafe` fail the check. A cycle closed only by type-only
 * imports inside one folder is a warning (`typeCycles`): it costs nothing at run time; across folders it fails.
 */
export function checkStructure({ files, imports }, layers = LAYERS) {
  const layerOf = new Map(layers.flatMap((layer, rank) => layer.folders.map((folder) => [folder, rank])));
  const unplaced = [...new Set(files.map((f) => folderOf(f) ?? f))].filter((folder) => !layerOf.has(folder)).sort();
  const unresolved = imports.filter((i) => i.unresolved);
  const local = imports.filter((i) => i.to);
  const upward = [];
  for (const i of local) {
    const from = layerOf.get(folderOf(i.from));
    const to = layerOf.get(folderOf(i.to));
    if (from !== undefined && to !== undefined && to > from) upward.push({ ...i, fromLayer: layers[from].name, toLayer: layers[to].name });
  }
  const runtimeCycles = findCycles(files, local.filter((i) => !i.typeOnly));
  const runtimeSets = new Set(runtimeCycles.map((c) => c.files.join('\n')));
  const typeCycles = findCycles(files, local).filter((c) => !runtimeSets.has(c.files.join('\n')));
  // Inside one folder, two files sharing types both ways is one concern; across folders it leaves them no order.
  const spansFolders = (c) => new Set(c.files.map(folderOf)).size > 1;
  return {
    files, imports, layers, unplaced, unresolved, upward,
    cycles: [...runtimeCycles, ...typeCycles.filter(spansFolders).map((c) => ({ ...c, typeOnly: true }))],
    typeCycles: typeCycles.filter((c) => !spansFolders(c)),
    browserUnsafe: browserUnsafe(files, imports),
  };
}

/** True when the check fails: type-only cycles alone do not fail it. */
export function hasProblems(result) {
  return describeProblems(result).length > 0;
}

/** Every problem, one per line, saying what is wrong and where; the empty list when the check passes. */
export function describeProblems(result) {
  const lines = [];
  for (const place of result.unplaced) lines.push(`unplaced: ${place.startsWith('src/') ? place : `src/${place}`} is in no layer; add its folder to LAYERS in scripts/structure.mjs, with the reason.`);
  for (const i of result.unresolved) lines.push(`unresolved: ${i.from}:${i.line} imports '${i.specifier}', which is no source file.`);
  for (const i of result.upward) {
    lines.push(`upward: ${i.from}:${i.line} (${i.fromLayer}) imports${i.typeOnly ? ' type-only' : ''} ${i.to} (${i.toLayer}), a higher layer; move the shared part down or invert the dependency.`);
  }
  for (const c of result.cycles) lines.push(`cycle: ${c.path.join(' -> ')} (${c.typeOnly ? 'closed by type-only imports across folders, ' : ''}${c.files.length} files tied together); move what they share into one of them or below both.`);
  for (const u of result.browserUnsafe) lines.push(`browser: ${u.chain.join(' -> ')} reaches '${u.external}' at run time; the panel script is bundled for a browser.`);
  return lines;
}

/** Warnings that do not fail the check. */
export function describeWarnings(result) {
  return result.typeCycles.map((c) => `type cycle: ${c.path.join(' -> ')} (closed by type-only imports inside one folder).`);
}

/** docs/structure.md: the layers, their folders and the arrows between them, generated from the result. */
export function renderStructureDoc(result) {
  const folders = folderStats(result);
  const arrows = folderArrows(result);
  const id = (folder) => folder.replace(/\W/g, '_');
  const mermaid = ['```mermaid', 'flowchart TD'];
  for (const [rank, layer] of [...result.layers.entries()].reverse()) {
    mermaid.push(`  subgraph layer${rank}["${rank}. ${layer.name}"]`);
    for (const folder of layer.folders) if (folders.has(folder)) mermaid.push(`    ${id(folder)}["${folder} (${folders.get(folder)} files)"]`);
    mermaid.push('  end');
  }
  for (const a of arrows) {
    const label = a.runtime > 0 ? `${a.runtime}${a.type > 0 ? ` + ${a.type} type` : ''}` : `${a.type} type`;
    mermaid.push(`  ${id(a.from)} ${a.runtime > 0 ? '-->' : '-.->'}|"${label}"| ${id(a.to)}`);
  }
  mermaid.push('```');
  const problems = [...describeProblems(result), ...describeWarnings(result)];
  return [
    '# Structure of src/',
    '',
    'Generated by `npm run structure` (scripts/structure.mjs) from the imports in src/; do not edit by hand.',
    'Run it again after moving code: it rewrites this file, and fails if an import runs up a layer or files import each other in a cycle.',
    '',
    `${result.files.length} source files, ${countOf(result.imports, (i) => i.to)} imports between them (${countOf(result.imports, (i) => i.to && i.typeOnly)} type-only).`,
    'A folder may import its own layer and the layers below it. An arrow counts the pairs of files (importer, imported) between two',
    'folders; a dotted arrow carries types only, which vanish at run time.',
    '',
    ...mermaid,
    '',
    '## Layers, bottom first',
    '',
    '| # | layer | folders | why here |',
    '| --- | --- | --- | --- |',
    ...result.layers.map((l, rank) => `| ${rank} | ${l.name} | ${l.folders.map((f) => `${f} (${folders.get(f) ?? 0})`).join(', ')} | ${l.why} |`),
    '',
    `The panel (${BROWSER_FOLDERS.join(', ')}) is bundled for a browser: what it imports at run time must not reach Node, an npm package or vscode.`,
    '',
    '## Arrows',
    '',
    '| from | to | run-time | type-only |',
    '| --- | --- | --- | --- |',
    ...arrows.map((a) => `| ${a.from} | ${a.to} | ${a.runtime} | ${a.type} |`),
    '',
    '## Problems and warnings',
    '',
    ...(problems.length > 0 ? problems.map((p) => `- ${p}`) : ['None.']),
    '',
  ].join('\n');
}

function importsIn(file, text) {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  const found = [];
  // Only `import()`, `require()` and import types hide below the top level; most files have none of them.
  const deep = /\bimport\s*\(|\brequire\s*\(/.test(text);
  const add = (node, specifier, typeOnly) => found.push({ from: file, specifier, typeOnly, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1 });
  const visit = (node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node, node.moduleSpecifier.text, isTypeOnlyDeclaration(node));
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference) && ts.isStringLiteral(node.moduleReference.expression)) {
      add(node, node.moduleReference.expression.text, node.isTypeOnly);
    } else if (ts.isCallExpression(node) && isImportOrRequire(node) && node.arguments.length > 0 && ts.isStringLiteralLike(node.arguments[0])) {
      add(node, node.arguments[0].text, false);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      add(node, node.argument.literal.text, true);
    }
    if (deep) ts.forEachChild(node, visit);
  };
  ts.forEachChild(source, visit);
  return found;
}

/** An import or re-export the compiler erases: marked `type`, or naming only `type` bindings. */
function isTypeOnlyDeclaration(node) {
  if (ts.isExportDeclaration(node)) return node.isTypeOnly || (!!node.exportClause && ts.isNamedExports(node.exportClause) && allTypeOnly(node.exportClause.elements));
  const clause = node.importClause;
  if (!clause) return false;
  if (clause.isTypeOnly) return true;
  return !clause.name && !!clause.namedBindings && ts.isNamedImports(clause.namedBindings) && allTypeOnly(clause.namedBindings.elements);
}

function allTypeOnly(elements) {
  return elements.length > 0 && elements.every((e) => e.isTypeOnly);
}

function isImportOrRequire(node) {
  return node.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(node.expression) && node.expression.text === 'require');
}

/** `to` for a source file in the tree, `external` for a package or builtin, `unresolved` for anything else. */
function resolveImport(from, specifier, known) {
  if (!specifier.startsWith('.')) return { external: specifier };
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  const stem = base.replace(/\.(js|mjs|ts|mts)$/, '');
  const candidates = [base, ...SOURCE_EXTENSIONS.map((e) => stem + e), ...SOURCE_EXTENSIONS.map((e) => `${base}/index${e}`)];
  const to = candidates.find((c) => known.has(c));
  if (to) return { to };
  return base.startsWith('src/') ? { unresolved: true } : { outside: base };
}

/** Strongly connected groups of files (Tarjan), each with one shortest cycle through its first file. */
function findCycles(files, edges) {
  const next = new Map(files.map((f) => [f, new Set()]));
  for (const e of edges) next.get(e.from)?.add(e.to);
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const groups = [];
  let counter = 0;
  const connect = (v) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) !== index.get(v)) return;
    const group = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      group.push(w);
    } while (w !== v);
    if (group.length > 1 || next.get(v).has(v)) groups.push(group.sort());
  };
  for (const f of files) if (!index.has(f)) connect(f);
  return groups.map((group) => ({ files: group, path: shortestCycle(group[0], new Set(group), next) })).sort((a, b) => a.files[0].localeCompare(b.files[0]));
}

function shortestCycle(start, within, next) {
  const parent = new Map();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    for (const w of [...(next.get(queue[i]) ?? [])].sort()) {
      if (!within.has(w)) continue;
      if (w === start) return [...unwind(queue[i], parent, start), start];
      if (!parent.has(w)) {
        parent.set(w, queue[i]);
        queue.push(w);
      }
    }
  }
  return [start];
}

function unwind(end, parent, start) {
  const chain = [end];
  while (chain[0] !== start) chain.unshift(parent.get(chain[0]));
  return chain;
}

/** Each package or builtin a browser folder reaches through run-time imports, with the chain that reaches it. */
function browserUnsafe(files, imports) {
  const runtime = new Map(files.map((f) => [f, []]));
  for (const i of imports) if (!i.typeOnly && (i.to || i.external)) runtime.get(i.from).push(i);
  const found = [];
  for (const start of files.filter((f) => BROWSER_FOLDERS.includes(folderOf(f)))) {
    const parent = new Map([[start, undefined]]);
    const queue = [start];
    const seen = new Set();
    for (let q = 0; q < queue.length; q++) {
      for (const i of runtime.get(queue[q])) {
        if (i.external && !seen.has(i.external)) {
          seen.add(i.external);
          found.push({ chain: unwind(queue[q], parent, start), external: i.external });
        } else if (i.to && !parent.has(i.to)) {
          parent.set(i.to, queue[q]);
          queue.push(i.to);
        }
      }
    }
  }
  return found;
}

function folderStats(result) {
  const counts = new Map();
  for (const f of result.files) counts.set(folderOf(f), (counts.get(folderOf(f)) ?? 0) + 1);
  return counts;
}

/** Folder-to-folder arrows; each pair of files counts once, as run-time if any import between them is. */
function folderArrows(result) {
  const pairs = new Map();
  for (const i of result.imports.filter((i) => i.to && folderOf(i.from) !== folderOf(i.to))) {
    const key = `${i.from}\n${i.to}`;
    pairs.set(key, (pairs.get(key) ?? true) && i.typeOnly);
  }
  const arrows = new Map();
  for (const [key, typeOnly] of pairs) {
    const [from, to] = key.split('\n').map(folderOf);
    const arrow = arrows.get(`${from} ${to}`) ?? { from, to, runtime: 0, type: 0 };
    arrow[typeOnly ? 'type' : 'runtime']++;
    arrows.set(`${from} ${to}`, arrow);
  }
  return [...arrows.values()].sort((a, b) => a.from.localeCompare(b.from) || a.to.localeCompare(b.to));
}

function countOf(items, predicate) {
  return items.filter(predicate).length;
}

function listSources(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return listSources(full);
    return SOURCE_EXTENSIONS.some((e) => entry.name.endsWith(e)) && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}

function toPosix(file) {
  return file.split(path.sep).join('/');
}

function main() {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const result = checkStructure(collectImports(root));
  fs.writeFileSync(path.join(root, 'docs/structure.md'), renderStructureDoc(result));
  for (const warning of describeWarnings(result)) console.warn(`warning: ${warning}`);
  const problems = describeProblems(result);
  if (problems.length > 0) {
    console.error(`Structure check failed, ${problems.length} problem(s):\n${problems.map((p) => `  ${p}`).join('\n')}`);
    console.error(`Layers (bottom first): ${LAYERS.map((l) => l.name).join(' < ')}; see scripts/structure.mjs. docs/structure.md was rewritten.`);
    process.exitCode = 1;
    return;
  }
  console.log(`Structure ok: ${result.files.length} files, ${countOf(result.imports, (i) => i.to)} imports, ${LAYERS.length} layers, no upward import, no cycle. Wrote docs/structure.md.`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
