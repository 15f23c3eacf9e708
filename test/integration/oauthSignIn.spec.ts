/**
 * OAuth sign-in from the CLI against an MCP server with its own authorization server (the 1.x fixture
 * test/fixtures/servers/oauthServer.mjs): the SDK 2.x client discovers, registers, and redeems the code
 * the loopback redirect brings back; the router keeps what the SDK hands over, issuer stamp included.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT, tempDir } from './serverHarness';

const CLI = path.join(REPO_ROOT, 'dist/cli.js');
const OAUTH_SERVER = path.join(REPO_ROOT, 'test/fixtures/servers/oauthServer.mjs');
const BROWSER = path.join(REPO_ROOT, 'test/fixtures/redirectFollowingBrowser.mjs');

describe('OAuth sign-in from the CLI', function () {
  this.timeout(90_000);
  let server: ChildProcess;
  let url: string;

  before(async () => {
    server = spawn(process.execPath, [OAUTH_SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
    url = await new Promise<string>((resolve) => {
      let out = '';
      server.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /LISTENING (\S+)/.exec(out);
        if (m) resolve(m[1]!);
      });
    });
  });

  after(() => server?.kill());

  it('signs in through the browser once, keeps the issuer-stamped tokens and discovery, and reuses them', () => {
    const dir = tempDir('oauth-cli');
    const config = path.join(dir, 'mcp.json');
    const cache = path.join(dir, 'cache');
    writeFileSync(config, JSON.stringify({ servers: { secured: { type: 'http', url } } }));
    const call = (extra: string[]) => spawnSync(process.execPath, [CLI, 'call', 'secured_whoami', '--config', config, '--cache-dir', cache, ...extra], { encoding: 'utf8', timeout: 60_000 });

    const first = call(['--browser', `${process.execPath} ${BROWSER}`]);
    assert.equal(first.status, 0, first.stderr);
    assert.match(first.stdout, /client [0-9a-f-]{36} with scopes mcp:tools/);

    const [file] = readdirSync(path.join(cache, 'oauth'));
    const stored = JSON.parse(readFileSync(path.join(cache, 'oauth', file!), 'utf8')) as { tokens?: { access_token?: string; issuer?: string }; client?: { issuer?: string }; discovery?: { authorizationServerUrl?: string } };
    const issuer = new URL(url).origin;
    assert.ok(stored.tokens?.access_token, 'a token was stored');
    assert.equal(new URL(stored.tokens.issuer ?? '').origin, issuer, 'tokens carry the issuer that granted them');
    assert.equal(new URL(stored.client?.issuer ?? '').origin, issuer, 'so does the registration');
    assert.equal(new URL(stored.discovery?.authorizationServerUrl ?? '').origin, issuer);

    // No browser this time: the stored token is enough.
    const second = call([]);
    assert.equal(second.status, 0, second.stderr);
    assert.match(second.stdout, /with scopes mcp:tools/);
    assert.doesNotMatch(second.stderr, /Sign in to continue/);
  });
});
