/**
 * Remote servers in real VS Code: OAuth sign-in and elicitation, against a local MCP server built on the
 * SDK (test/fixtures/servers/oauthServer.mjs) with its own OAuth authorization server.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { CallEnvelope } from '../../../src/core/router/callEnvelope';
import { COMMANDS } from '../../../src/extension/commandIds';
import { internals, waitFor } from './helpers';

const REPO = process.env['TOOL_ROUTER_REPO'] ?? path.resolve(__dirname, '../../..');
const FIXTURE = path.join(REPO, 'test/fixtures/servers/oauthServer.mjs');



async function startFixture(args: string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [FIXTURE, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' } });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  await waitFor(() => /LISTENING (\S+)/.test(out), 'the test server to listen', 15_000);
  return { child, url: /LISTENING (\S+)/.exec(out)![1]! };
}

describe('remote servers: sign-in and elicitation', function () {
  this.timeout(90_000);
  const config = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration('toolRouter');
  const fixtures: ChildProcess[] = [];

  after(async () => {
    await config().update('servers', {}, vscode.ConfigurationTarget.Workspace);
    for (const f of fixtures) f.kill();
  });

  it('asks for what a server requests mid-call with a form, and completes the call with the answers', async () => {
    const { service } = await internals();
    const fixture = await startFixture(['--open']);
    fixtures.push(fixture.child);
    await config().update('servers', { asker: { type: 'http', url: fixture.url } }, vscode.ConfigurationTarget.Workspace);
    await waitFor(() => service.router.getTool('asker_ask_favourite') !== undefined, 'the asker server');
    const pending = vscode.commands.executeCommand<CallEnvelope>(COMMANDS.callTool, { tool: 'asker_ask_favourite', args: {}, quiet: true });
    let done = false;
    void pending.then(() => (done = true));
    // Answer the form as a user would by pressing Enter: "Answer", then the offered default of each field.
    for (let i = 0; i < 40 && !done; i++) {
      await new Promise((r) => setTimeout(r, 250));
      await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
    }
    const envelope = await pending;
    assert.ok(envelope.ok, JSON.stringify(envelope));
    assert.match(JSON.stringify(envelope.content), /accept: \{\\"colour\\":\\"blue\\",\\"count\\":3\}/);
  });

  it('signs in to an OAuth-protected server from VS Code, keeping the token in SecretStorage only', async () => {
    const { service } = await internals();
    const fixture = await startFixture([]);
    fixtures.push(fixture.child);
    await config().update('servers', { secured: { type: 'http', url: fixture.url } }, vscode.ConfigurationTarget.Workspace);
    await waitFor(() => service.router.getConnection('secured')?.status.needsSignIn === true, 'the server to need sign-in');

    const signedIn = await vscode.commands.executeCommand<boolean>(COMMANDS.signIn, 'secured');
    assert.equal(signedIn, true, service.router.getConnection('secured')?.status.reason);
    const envelope = await vscode.commands.executeCommand<CallEnvelope>(COMMANDS.callTool, { tool: 'secured_whoami', args: {}, quiet: true });
    assert.ok(envelope.ok, JSON.stringify(envelope));
    assert.match(JSON.stringify(envelope.content), /client [0-9a-f-]{36} with scopes mcp:tools/);

    // The token is in SecretStorage, and in neither the settings nor the logs.
    const stored = service.router.getConnection('secured')!.oauth!.tokens();
    assert.ok(stored?.access_token, 'a token was stored');
    assert.ok(!JSON.stringify(config().get('servers')).includes(stored.access_token));
    assert.ok(!service.router.getConnection('secured')!.log.text().includes(stored.access_token), 'not in the server log');

    await vscode.commands.executeCommand(COMMANDS.signOut, 'secured');
    await waitFor(() => service.router.getConnection('secured')?.status.needsSignIn === true, 'needs sign-in again after Sign Out');
  });
});
