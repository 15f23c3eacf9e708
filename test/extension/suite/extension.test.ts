/**
 * Extension-host tests: run inside a real VS Code (code-server 1.139 through scripts/vscode-host, or a
 * desktop VS Code through @vscode/test-electron) against real MCP servers from npm.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import * as http from 'node:http';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallEnvelope } from '../../../src/core/router/callEnvelope';
import type { Selection } from '../../../src/core/selection/selectionTypes';
import { COMMANDS } from '../../../src/extension/commandIds';
import { api, EXTENSION_ID, internals, waitFor } from './helpers';
import { TOOL_ROUTER_API_VERSION, type ToolRouterApi } from '../../../src/extension/api';

const REPO = process.env['TOOL_ROUTER_REPO'] ?? path.resolve(__dirname, '../../..');



function workspaceFile(...parts: string[]): string {
  const folder = vscode.workspace.workspaceFolders?.[0];
  assert.ok(folder, 'the tests need a workspace folder');
  return path.join(folder.uri.fsPath, ...parts);
}

describe('MCP Tool Router in VS Code', function () {
  this.timeout(90_000);

  it('activates (the workspace has .vscode/mcp.json) and exposes its API', async () => {
    const extension = vscode.extensions.getExtension<ToolRouterApi>(EXTENSION_ID);
    assert.ok(extension);
    await waitFor(() => extension.isActive, 'activation by workspaceContains:.vscode/mcp.json');
    const exported = await api();
    assert.equal(exported.version, TOOL_ROUTER_API_VERSION, 'the API carries its version');
    assert.deepEqual(Object.keys(exported).sort(), ['callTool', 'listServers', 'listTools', 'onDidChange', 'selectTools', 'version', 'whenSettled'], 'the API shows only its documented members');
  });

  it('registers every command that package.json contributes', async () => {
    const manifest = JSON.parse(await readFile(path.join(REPO, 'package.json'), 'utf8')) as { contributes: { commands: Array<{ command: string }> } };
    const registered = new Set(await vscode.commands.getCommands(true));
    const declared = manifest.contributes.commands.map((c) => c.command);
    assert.deepEqual(declared.filter((c) => !registered.has(c)), [], 'declared but not registered');
    assert.deepEqual([...Object.values(COMMANDS)].sort(), [...declared].sort(), 'the code and the manifest list the same commands');
  });

  it('starts the servers of the workspace mcp.json and calls a tool through the Call Tool command', async () => {
    const { listServers, whenSettled } = await api();
    await whenSettled();
    const states = Object.fromEntries(listServers().map((s) => [s.name, s.state]));
    assert.equal(states['everything'], 'ready', JSON.stringify(listServers()));
    assert.equal(states['memory'], 'ready');
    const envelope = await vscode.commands.executeCommand<CallEnvelope>(COMMANDS.callTool, { tool: 'everything_echo', args: { message: 'from the extension host' }, quiet: true });
    assert.ok(envelope?.ok, JSON.stringify(envelope));
    assert.equal(envelope.ok && envelope.content[0]?.['text'], 'Echo: from the extension host');

    const invalid = await vscode.commands.executeCommand<CallEnvelope>(COMMANDS.callTool, { tool: 'everything_get-sum', args: { a: 'x' }, quiet: true });
    assert.equal(invalid?.ok, false);
    assert.equal(invalid && !invalid.ok && invalid.error.type, 'INVALID_ARGUMENTS');
  });

  it('lists, selects and calls tools through the API other extensions use', async () => {
    const router = await api();
    await router.whenSettled();
    const echo = router.listTools().find((t) => t.name === 'everything_echo');
    assert.ok(echo, JSON.stringify(router.listTools().map((t) => t.name)));
    assert.equal(echo.server, 'everything');
    const selection = await router.selectTools('please echo this message back to me');
    assert.ok(selection.tools.length > 0, JSON.stringify(selection));
    for (const t of selection.tools) assert.ok(t.reason.length > 0, `${t.name} has a reason`);
    const result = await router.callTool('everything_echo', { message: 'through the API' });
    assert.ok(result?.ok, JSON.stringify(result));
    assert.equal(result.ok && (result.content[0] as { text?: string }).text, 'Echo: through the API');
    const invalid = await router.callTool('everything_get-sum', { a: 'x' });
    assert.equal(invalid && !invalid.ok && invalid.error.type, 'INVALID_ARGUMENTS');
  });

  it('Call Tool honours the destructive-tools policy "never", even when the caller says it has asked', async () => {
    const { whenSettled } = await api();
    await whenSettled();
    const config = vscode.workspace.getConfiguration('toolRouter');
    await config.update('selection.allowDestructiveTools', 'never', vscode.ConfigurationTarget.Workspace);
    try {
      const refused = await vscode.commands.executeCommand<CallEnvelope>(COMMANDS.callTool, { tool: 'memory_delete_entities', args: { entityNames: ['nobody'] }, confirmDestructive: true, quiet: true });
      assert.equal(refused?.ok, false, JSON.stringify(refused));
      assert.equal(refused && !refused.ok && refused.error.type, 'NOT_APPROVED');
      assert.match(refused && !refused.ok ? refused.error.message : '', /policy is "never".*toolRouter\.selection\.allowedDestructiveTools/);
      // Allow-listed by name, the same call runs.
      await config.update('selection.allowedDestructiveTools', ['memory_delete_entities'], vscode.ConfigurationTarget.Workspace);
      const allowed = await vscode.commands.executeCommand<CallEnvelope>(COMMANDS.callTool, { tool: 'memory_delete_entities', args: { entityNames: ['nobody'] }, quiet: true });
      assert.ok(allowed?.ok, JSON.stringify(allowed));
    } finally {
      await config.update('selection.allowDestructiveTools', undefined, vscode.ConfigurationTarget.Workspace);
      await config.update('selection.allowedDestructiveTools', undefined, vscode.ConfigurationTarget.Workspace);
    }
  });

  it('opens the result in a read-only editor with its timing', async () => {
    await vscode.commands.executeCommand<CallEnvelope>(COMMANDS.callTool, { tool: 'everything_echo', args: { message: 'shown' } });
    await waitFor(() => vscode.window.activeTextEditor?.document.uri.scheme === 'tool-router-result', 'the result editor');
    const text = vscode.window.activeTextEditor!.document.getText();
    assert.match(text, /^\/\/ everything_echo · ok · [\d.]+ ms · \d+ bytes/);
    assert.match(text, /Echo: shown/);
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
  });

  it('reports the misconfigured server with file, server and field, while the others work', async () => {
    const { service } = await internals();
    const issue = service.configIssues.find((i) => i.server === 'misconfigured');
    assert.ok(issue, JSON.stringify(service.configIssues));
    assert.equal(issue.field, 'args');
    assert.equal(issue.file, workspaceFile('.vscode', 'mcp.json'));
    assert.equal(service.router.getConnection('misconfigured'), undefined);
    assert.ok(service.router.getTool('memory_read_graph'));
  });

  it('picks up a settings change without a reload', async () => {
    const { listTools } = await api();
    const hasTool = (name: string): boolean => listTools().some((t) => t.name === name);
    const config = vscode.workspace.getConfiguration('toolRouter');
    const extra = { servers: { extra: { command: 'node', args: [path.join(REPO, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'] } } };
    try {
      await config.update('servers', extra, vscode.ConfigurationTarget.Workspace);
      await waitFor(() => hasTool('extra_echo'), 'the server added in settings');
      const envelope = await vscode.commands.executeCommand<CallEnvelope>(COMMANDS.callTool, { tool: 'extra_echo', args: { message: 'from settings' }, quiet: true });
      assert.ok(envelope?.ok, JSON.stringify(envelope));
    } finally {
      await config.update('servers', {}, vscode.ConfigurationTarget.Workspace);
    }
    await waitFor(() => !hasTool('extra_echo'), 'the server removed from settings');
  });

  it('follows edits of mcp.json: a broken file is reported, and its fix is picked up', async () => {
    const { service } = await internals();
    const file = workspaceFile('.vscode', 'mcp.json');
    const original = await readFile(file, 'utf8');
    try {
      await writeFile(file, '{ "servers": { "everything": ');
      await waitFor(() => service.configIssues.some((i) => /Invalid JSON/.test(i.message)), 'the JSON error to be reported');
      assert.equal(service.configIssues.find((i) => /Invalid JSON/.test(i.message))?.file, file);
    } finally {
      await writeFile(file, original);
    }
    await waitFor(() => service.router.getTool('everything_echo') !== undefined && !service.configIssues.some((i) => /Invalid JSON/.test(i.message)), 'the fixed file to be loaded');
  });

  it('explains the selection for a typed prompt, with a reason for every tool', async () => {
    const { service, selection } = await internals();
    await waitFor(() => service.router.getTool('memory_create_entities') !== undefined, 'memory tools');
    const engine = await selection.getEngine();
    await engine.index?.whenReady();
    const result = await vscode.commands.executeCommand<Selection>(COMMANDS.explainSelection, { prompt: 'please echo this message back to me', quiet: true });
    assert.ok(result, 'a selection');
    // onnxruntime and the bundled model must load in the real host: keyword-only selection fails here.
    assert.equal(result.method, 'embedding+keyword', `${result.method}: ${result.methodNote ?? ''} ${engine.embedderProblem ?? ''}`);
    // The model runs in a worker thread: the extension host's own thread never loads onnxruntime.
    const loadedHere = Object.keys(require.cache).filter((file) => /onnxruntime-node/.test(file));
    assert.deepEqual(loadedHere, [], 'onnxruntime loaded on the extension host thread');
    assert.ok(result.tools.some((t) => t.name === 'everything_echo'), JSON.stringify(result.tools.map((t) => t.name)));
    for (const t of result.tools) assert.ok(t.reason.length > 0 && t.stages.length > 0, `${t.name} has a reason and stages`);
    assert.ok(result.tokens.selected < result.tokens.catalogue);
  });

  it('downloads a model folder from a URL with a SHA-256 check (Download Model… against a local server)', async () => {
    const modelDir = path.join(REPO, 'media', 'model');
    const server = http.createServer((req, res) => {
      const file = path.join(modelDir, path.basename(decodeURIComponent(req.url ?? '')));
      readFile(file).then(
        (body) => res.writeHead(200, { 'content-length': body.length }).end(body),
        () => res.writeHead(404).end(),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as { port: number }).port;
      const sha256 = createHash('sha256').update(await readFile(path.join(modelDir, 'model.onnx'))).digest('hex');
      const dest = await vscode.commands.executeCommand<string>(COMMANDS.downloadModel, { url: `http://127.0.0.1:${port}/models/default/`, sha256, name: 'downloaded-test-model', use: false });
      assert.ok(dest, 'the command returned the model folder');
      assert.equal(createHash('sha256').update(await readFile(path.join(dest, 'model.onnx'))).digest('hex'), sha256);
      assert.ok((await readFile(path.join(dest, 'tokenizer.json'))).length > 0);
      const wrong = await vscode.commands.executeCommand<string | undefined>(COMMANDS.downloadModel, { url: `http://127.0.0.1:${port}/models/default/`, sha256: '0'.repeat(64), name: 'bad-test-model', use: false });
      assert.equal(wrong, undefined, 'a SHA-256 mismatch is refused');
    } finally {
      server.close();
    }
  });

  it('restarts a server through the Restart Server command', async () => {
    const { service } = await internals();
    const before = service.router.getConnection('memory')!.status.restarts;
    await vscode.commands.executeCommand(COMMANDS.restartServer, 'memory');
    await waitFor(() => service.router.getConnection('memory')!.status.state === 'ready' && service.router.getConnection('memory')!.status.restarts === before + 1, 'the restart');
    const count = await vscode.commands.executeCommand<number>(COMMANDS.refreshTools);
    assert.ok((count ?? 0) > 10);
  });

  it('takes the workspace servers over from VS Code and gives them back, leaving mcp.json byte-identical', async () => {
    const { service } = await internals();
    const file = workspaceFile('.vscode', 'mcp.json');
    const routerFile = workspaceFile('.vscode', 'mcp-tool-router.json');
    const before = await readFile(file);
    assert.deepEqual([...service.sharedWithVsCode].sort(), ['everything', 'memory'], 'before: VS Code starts them too');
    const pid = service.router.getConnection('everything')!.status.pid;
    const moved = await vscode.commands.executeCommand<string[]>(COMMANDS.takeOverServers, { file, confirmed: true });
    assert.deepEqual(moved, ['everything', 'memory', 'misconfigured']);
    const left = (await readFile(file, 'utf8')).replace(/\/\/.*$/gm, '');
    assert.deepEqual(JSON.parse(left).servers, {}, 'VS Code is left no servers');
    await waitFor(() => service.router.getConnection('everything')?.status.state === 'ready' && service.sharedWithVsCode.length === 0, 'the router to run them from its own file');
    // The definition is the same, so the server was not restarted for the move.
    assert.equal(service.router.getConnection('everything')!.status.pid, pid);
    assert.match(String(await readFile(routerFile, 'utf8')), /"everything"/);

    // What VS Code now sees of them comes through the router's gateway: their prompts and resources too.
    const { gateway } = await internals();
    const { url, secret } = await gateway.connection();
    const client = new Client({ name: 'after-take-over', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${secret}` } } }));
    try {
      const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
      assert.ok(prompts.includes('everything_simple-prompt'), JSON.stringify(prompts));
      let cursor: string | undefined;
      const uris: string[] = [];
      do {
        const page = await client.listResources(cursor ? { cursor } : {});
        uris.push(...page.resources.map((r) => r.uri));
        cursor = page.nextCursor;
      } while (cursor);
      assert.ok(uris.some((u) => u.startsWith('demo://resource/static/')), JSON.stringify(uris));
      const read = await client.readResource({ uri: uris.find((u) => u.startsWith('demo://resource/static/'))! });
      assert.ok(read.contents.length > 0);
    } finally {
      await client.close();
    }

    const restored = await vscode.commands.executeCommand<string[]>(COMMANDS.giveBackServers, { file, confirmed: true });
    assert.deepEqual(restored, ['everything', 'memory', 'misconfigured']);
    assert.ok((await readFile(file)).equals(before), 'mcp.json is byte-identical to before');
    await assert.rejects(readFile(routerFile), /ENOENT/);
    await waitFor(() => service.router.getConnection('everything')?.status.state === 'ready' && service.sharedWithVsCode.length === 2, 'the servers back from mcp.json');
  });
});
