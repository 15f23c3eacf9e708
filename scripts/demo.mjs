// The main job: builds the VSIX, installs it into a real VS Code (code-server 1.139, offline) and opens a
// demo workspace whose .vscode/mcp.json lists the npm reference servers. Prints the URL and keeps running
// until Ctrl-C. With --check it stops once the workbench answers (used to smoke-test this script).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT, createRunDir, installVsix, startCodeServer } from './vscode-host/code-server-host.mjs';

const check = process.argv.includes('--check');
const { name, version } = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8'));
const target = `${process.platform}-${process.arch}`;
const vsix = path.join(REPO_ROOT, 'out', `${name}-${target}-${version}.vsix`);
execFileSync(process.execPath, [path.join(REPO_ROOT, 'scripts/package.mjs'), '--target', target], { stdio: ['ignore', 'ignore', 'inherit'], cwd: REPO_ROOT });

const workspace = path.join(REPO_ROOT, '.cache', 'demo-workspace');
mkdirSync(path.join(workspace, '.vscode'), { recursive: true });
const server = (pkg, ...args) => ({ type: 'stdio', command: 'node', args: [path.join(REPO_ROOT, 'node_modules', pkg, 'dist/index.js'), ...args] });
// The servers are routed: they live in the router's own file, and VS Code's mcp.json starts none of them,
// so each runs once and agent mode sees the router. server-everything's prompts and resources come
// through the router's gateway like its tools.
writeFileSync(
  path.join(workspace, '.vscode', 'mcp.json'),
  '// The servers are routed: they are in mcp-tool-router.json beside this file (MCP Tool Router reads it).\n{ "servers": {} }\n',
);
writeFileSync(
  path.join(workspace, '.vscode', 'mcp-tool-router.json'),
  `${JSON.stringify(
    {
      servers: {
        everything: server('@modelcontextprotocol/server-everything', 'stdio'),
        memory: { ...server('@modelcontextprotocol/server-memory'), env: { MEMORY_FILE_PATH: '${workspaceFolder}/memory.jsonl' } },
        files: server('@modelcontextprotocol/server-filesystem', '${workspaceFolder}'),
      },
    },
    null,
    2,
  )}\n`,
);
writeFileSync(
  path.join(workspace, 'README.md'),
  '# MCP Tool Router demo\n\nThis folder\'s `.vscode/mcp-tool-router.json` lists three reference MCP servers, routed through MCP Tool Router: each runs once, and VS Code sees them through the router (enable "MCP Tool Router" in the agent\'s tool picker; server-everything\'s prompts and resources come through it too). Open the command palette (F1) and run **Tool Router: Call Tool…**, or open the MCP Tool Router view in the activity bar.\n',
);

const runDir = await createRunDir('demo');
await installVsix(vsix, { extensionsDir: runDir.extensionsDir, userDataDir: runDir.userDataDir, runDir });
const port = process.env.DEMO_PORT ? Number(process.env.DEMO_PORT) : undefined;
const codeServer = await startCodeServer({ folder: workspace, extensionsDir: runDir.extensionsDir, userDataDir: runDir.userDataDir, runDir, ...(port ? { port } : {}) });
const url = codeServer.workbenchUrl({ folder: workspace });
console.log(`MCP Tool Router ${version} is installed in VS Code (code-server), with the demo servers:\n\n  ${url}\n`);

if (check) {
  const answer = await fetch(url);
  await codeServer.stop();
  if (!answer.ok) throw new Error(`the workbench answered ${answer.status}`);
  console.log('check: the workbench answered; stopped.');
} else {
  console.log('Press Ctrl-C to stop.');
  const stop = async () => {
    await codeServer.stop();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  codeServer.onExit((code) => {
    console.error(`code-server exited (code ${code}).`);
    process.exit(1);
  });
}
