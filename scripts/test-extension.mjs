// Runs the extension-host test suite (test/extension) with @vscode/test-electron's runTests. Where the
// project's offline VS Code host is provisioned (.cache/vscode-host, scripts/vscode-host/provision.sh),
// runTests is given its stand-in executable and the suite runs in a real VS Code 1.139 (code-server);
// elsewhere, or with TOOL_ROUTER_TEST_DESKTOP=1, runTests downloads and runs VS Code desktop, as
// contributors with a network expect. The test workspace is copied to a fresh folder
// first, because the tests edit its mcp.json and settings. The fake scripted language model the chat
// tests need is packed as a VSIX and installed beside (the web workbench loads one development
// extension only). Exit code: the suite's result.
import { execFileSync } from 'node:child_process';
import { runTests } from '@vscode/test-electron';
import { cpSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { createRunDir, installVsix } from './vscode-host/code-server-host.mjs';

const repo = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const workspace = path.join(repo, '.cache', 'ext-test-workspace');
rmSync(workspace, { recursive: true, force: true });
mkdirSync(workspace, { recursive: true });
cpSync(path.join(repo, 'test/extension/workspace'), workspace, { recursive: true });

// A fake scripted language model, for the chat participant's tests (no real model can be scripted).
const fakeDir = path.join(repo, 'test/extension/fakeModelProvider');
const fakeVsix = path.join(repo, '.cache', 'tool-router-fake-model.vsix');
execFileSync(process.execPath, [path.join(repo, 'node_modules/@vscode/vsce/vsce'), 'package', '--allow-missing-repository', '--skip-license', '--no-dependencies', '--out', fakeVsix], { cwd: fakeDir, stdio: ['ignore', 'ignore', 'inherit'] });
const run = await createRunDir('fake-model-install');
await installVsix(fakeVsix, { extensionsDir: run.extensionsDir, userDataDir: run.userDataDir, runDir: run });

const local = path.join(repo, 'scripts/vscode-host/code-test-executable');
const useLocal = existsSync(path.join(repo, '.cache/vscode-host/code-server')) && process.env.TOOL_ROUTER_TEST_DESKTOP !== '1';
try {
  await runTests({
    ...(useLocal ? { vscodeExecutablePath: local } : {}),
    extensionDevelopmentPath: repo,
    extensionTestsPath: path.join(repo, 'out/test/extension/index'),
    launchArgs: [workspace, `--extensions-dir=${run.extensionsDir}`],
    extensionTestsEnv: { TOOL_ROUTER_REPO: repo },
  });
  process.exit(0);
} catch (error) {
  console.error(`extension-host tests failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
