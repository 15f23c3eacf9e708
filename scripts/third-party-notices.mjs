// Writes THIRD_PARTY_NOTICES.md for the VSIX: the license text of every npm package bundled into
// dist/extension.js (read from esbuild's metafile), so the notices match what actually ships.
import { readFile, writeFile, readdir } from 'node:fs/promises';
import * as path from 'node:path';

const meta = JSON.parse(await readFile('dist/extension.meta.json', 'utf8'));
const packages = new Map();
for (const input of Object.keys(meta.inputs)) {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
  if (!m) continue;
  const dir = input.slice(0, m.index + 'node_modules/'.length + m[1].length);
  packages.set(m[1], dir);
}

/** Licenses the project accepts for bundled code: permissive only. */
const PERMISSIVE = /^(MIT|ISC|Apache-2\.0|BSD-2-Clause|BSD-3-Clause|0BSD|BlueOak-1\.0\.0|CC0-1\.0|Unlicense)$/;
const sections = [];
const problems = [];
for (const [name, dir] of [...packages].sort(([a], [b]) => a.localeCompare(b))) {
  const pkg = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8'));
  const license = typeof pkg.license === 'string' ? pkg.license : pkg.license?.type ?? 'UNKNOWN';
  if (!license.split(/\s+OR\s+|[()]/).some((l) => PERMISSIVE.test(l.trim()))) problems.push(`${name}: ${license}`);
  const files = await readdir(dir);
  const licenseFile = files.find((f) => /^(licen[cs]e|copying)(\.|$)/i.test(f));
  const text = licenseFile ? (await readFile(path.join(dir, licenseFile), 'utf8')).trim() : `(${license}; the package ships no license file)`;
  sections.push(`## ${name} ${pkg.version}\n\nLicense: ${license}\n\n\`\`\`\n${text}\n\`\`\``);
}
if (problems.length) {
  console.error(`Bundled packages without a permissive license:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
await writeFile(
  'THIRD_PARTY_NOTICES.md',
  `# Third-party notices\n\nMCP Tool Router bundles the following packages. Their licenses follow.\n\n${sections.join('\n\n')}\n`,
);
console.log(`THIRD_PARTY_NOTICES.md: ${packages.size} packages`);
