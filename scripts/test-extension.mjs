// Runs the extension-host test suite (test/extension) inside a real VS Code 1.139 (code-server, offline),
// through the project's harness in scripts/vscode-host. The test workspace is copied to a fresh folder
// first, because the tests edit its mcp.json and settings. Exit code: the suite's result.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync } from 'node:fs';
import * as path from 'node:path';

const repo = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const workspace = path.join(repo, '.cache', 'ext-test-workspace');
rmSync(workspace, { recursive: true, force: true });
mkdirSync(workspace, { recursive: true });
cpSync(path.join(repo, 'test/extension/workspace'), workspace, { recursive: true });

const result = spawnSync(
  process.execPath,
  [
    path.join(repo, 'scripts/vscode-host/run-extension-tests.mjs'),
    `--extensionDevelopmentPath=${repo}`,
    `--extensionTestsPath=${path.join(repo, 'out/test/extension/index')}`,
    `--folder=${workspace}`,
  ],
  { stdio: 'inherit', env: { ...process.env, TOOL_ROUTER_REPO: repo } },
);
process.exit(result.status ?? 1);
