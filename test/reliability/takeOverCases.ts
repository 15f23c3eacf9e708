/** Taking servers over and giving them back, over the shapes an mcp.json comes in: modes, marks, line ends, links. */
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { backupBeside, checkGiveBack, giveBack, routerConfigBeside, takeOver } from '../../src/core/config/takeOver';
import { tempDir } from '../integration/serverHarness';
import type { ReliabilityCase } from './faultCases';
import { check } from './reliabilityHarness';

/** Windows has no POSIX permission bits and needs a privilege to make symbolic links: those shapes are left out there. */
const POSIX = process.platform !== 'win32';
const MODES = POSIX ? [0o600, 0o640, 0o644] : [undefined];
const LINKED = POSIX ? [false, true] : [false];
const ROUTER_FILES = POSIX ? (['none', 'plain', 'linked'] as const) : (['none', 'plain'] as const);

interface Shape {
  readonly mode: number | undefined;
  readonly bom: boolean;
  readonly crlf: boolean;
  readonly linked: boolean;
  readonly routerFile: (typeof ROUTER_FILES)[number];
}

const SHAPES: Shape[] = MODES.flatMap((mode) =>
  [false, true].flatMap((bom) => [false, true].flatMap((crlf) => LINKED.flatMap((linked) => ROUTER_FILES.map((routerFile) => ({ mode, bom, crlf, linked, routerFile }))))),
);

const MCP_JSON = [
  '{',
  '  // the team\'s servers',
  '  "inputs": [{ "type": "promptString", "id": "token", "password": true }],',
  '  "servers": {',
  '    "github": { "type": "http", "url": "https://example.com/mcp", "headers": { "Authorization": "Bearer ${input:token}" } },',
  '  },',
  '}',
  '',
];

const permissions = (file: string): number => statSync(file).mode & 0o777;
const octal = (mode: number): string => mode.toString(8);
const listing = (dir: string): string[] => readdirSync(dir).sort();

/** Lays out one shape in a fresh folder: `.vscode/mcp.json` (perhaps a link into `elsewhere/`) and perhaps a router file. */
function layOut(shape: Shape): { mcpJson: string; mcpTarget: string; routerTarget: string; dirs: string[] } {
  const root = tempDir('take-over');
  const vscodeDir = path.join(root, '.vscode');
  const elsewhere = path.join(root, 'elsewhere');
  mkdirSync(vscodeDir);
  mkdirSync(elsewhere);
  const mcpJson = path.join(vscodeDir, 'mcp.json');
  const mcpTarget = shape.linked ? path.join(elsewhere, 'mcp.json') : mcpJson;
  writeFileSync(mcpTarget, `${shape.bom ? '\uFEFF' : ''}${MCP_JSON.join(shape.crlf ? '\r\n' : '\n')}`);
  if (shape.mode !== undefined) chmodSync(mcpTarget, shape.mode);
  if (shape.linked) symlinkSync(path.join('..', 'elsewhere', 'mcp.json'), mcpJson);
  const routerFile = routerConfigBeside(mcpJson);
  const routerTarget = shape.routerFile === 'linked' ? path.join(elsewhere, 'router.json') : routerFile;
  if (shape.routerFile !== 'none') {
    writeFileSync(routerTarget, '{ "servers": { "local": { "command": "node" } } }\n');
    if (POSIX) chmodSync(routerTarget, 0o644);
  }
  if (shape.routerFile === 'linked') symlinkSync(routerTarget, routerFile);
  return { mcpJson, mcpTarget, routerTarget, dirs: [vscodeDir, elsewhere] };
}

function roundTrip(shape: Shape): void {
  const label = JSON.stringify({ ...shape, mode: shape.mode === undefined ? undefined : octal(shape.mode) });
  const { mcpJson, mcpTarget, routerTarget, dirs } = layOut(shape);
  const routerFile = routerConfigBeside(mcpJson);
  const bytesBefore = readFileSync(mcpTarget);
  const routerBefore = existsSync(routerTarget) ? readFileSync(routerTarget) : undefined;
  const modeBefore = permissions(mcpTarget);
  const routerModeBefore = routerBefore ? permissions(routerTarget) : undefined;
  const listings = dirs.map(listing);

  takeOver(mcpJson);
  check(lstatSync(mcpJson).isSymbolicLink() === shape.linked, `${label}: mcp.json's link was ${shape.linked ? 'replaced by a file' : 'made a link'}`);
  check(lstatSync(routerFile).isSymbolicLink() === (shape.routerFile === 'linked'), `${label}: the router file's link was not kept`);
  check(readFileSync(mcpTarget).subarray(0, 3).equals(Buffer.from([0xef, 0xbb, 0xbf])) === shape.bom, `${label}: the byte order mark was ${shape.bom ? 'dropped' : 'added'}`);
  check(checkGiveBack(mcpJson).editedSince.length === 0, `${label}: the take-over's own writes count as edits`);
  if (POSIX) {
    check(permissions(mcpTarget) === modeBefore, `${label}: mcp.json became ${octal(permissions(mcpTarget))}, was ${octal(modeBefore)}`);
    const allowed = modeBefore & (routerModeBefore ?? 0o777);
    for (const file of [routerTarget, backupBeside(mcpJson)]) {
      check((permissions(file) & ~allowed) === 0, `${label}: ${path.basename(file)} is ${octal(permissions(file))}, wider than ${octal(allowed)}`);
    }
  }

  giveBack(mcpJson);
  check(readFileSync(mcpTarget).equals(bytesBefore), `${label}: mcp.json did not come back byte for byte`);
  check(lstatSync(mcpJson).isSymbolicLink() === shape.linked, `${label}: mcp.json's link was not kept by giving back`);
  if (routerBefore) check(readFileSync(routerTarget).equals(routerBefore), `${label}: the router file did not come back byte for byte`);
  if (POSIX) {
    check(permissions(mcpTarget) === modeBefore, `${label}: mcp.json came back ${octal(permissions(mcpTarget))}, was ${octal(modeBefore)}`);
    if (routerModeBefore !== undefined) check(permissions(routerTarget) === routerModeBefore, `${label}: the router file came back ${octal(permissions(routerTarget))}, was ${octal(routerModeBefore)}`);
  }
  dirs.forEach((dir, i) => check(listing(dir).join() === listings[i]!.join(), `${label}: ${dir} holds ${listing(dir).join(', ')}, held ${listings[i]!.join(', ')} (a file left behind or lost)`));
}

export const takeOverCases: ReliabilityCase[] = [
  {
    name: `take-over and give-back: ${SHAPES.length} shapes of mcp.json (modes, byte order mark, CRLF, links), kept and restored exactly`,
    inputs: SHAPES.length,
    run: async () => {
      for (const shape of SHAPES) roundTrip(shape);
    },
  },
];
