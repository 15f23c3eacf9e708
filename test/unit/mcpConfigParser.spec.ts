import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseEnvFile } from '../../src/core/config/envFile';
import {
  MAX_CONFIG_BYTES,
  loadMcpConfigFile,
  parseMcpConfig,
  redactUrl,
  type ConfigContext,
  type InputDefinition,
  type ParsedConfig,
} from '../../src/core/config/mcpConfigParser';
import { DEFAULT_ROUTER_OPTIONS, formatConfigIssue, redactSecrets, type ConfigIssue, type ServerDefinition, type StdioLaunch } from '../../src/core/config/serverConfig';

const FILE = '/configs/mcp.json';

/** Parses with an empty environment, so nothing depends on the machine running the tests. */
function parse(text: string, ctx: Partial<ConfigContext> = {}): Promise<ParsedConfig> {
  return parseMcpConfig(text, { file: FILE, env: {}, ...ctx });
}

function parseObject(config: unknown, ctx: Partial<ConfigContext> = {}): Promise<ParsedConfig> {
  return parse(JSON.stringify(config), ctx);
}

function server(parsed: ParsedConfig, name: string): ServerDefinition {
  const found = parsed.servers.find((s) => s.name === name);
  assert.ok(found, `server "${name}" was not parsed; issues: ${parsed.issues.map(formatConfigIssue).join(' | ')}`);
  return found;
}

function stdio(parsed: ParsedConfig, name: string): StdioLaunch {
  const launch = server(parsed, name).launch;
  assert.equal(launch.type, 'stdio');
  return launch as StdioLaunch;
}

function errors(parsed: ParsedConfig): ConfigIssue[] {
  return parsed.issues.filter((i) => i.severity === 'error');
}

function warnings(parsed: ParsedConfig): ConfigIssue[] {
  return parsed.issues.filter((i) => i.severity === 'warning');
}

/** The one error for `serverName`; fails when there is none or more than one. */
function theError(parsed: ParsedConfig, serverName: string): ConfigIssue {
  const found = errors(parsed).filter((i) => i.server === serverName);
  assert.equal(found.length, 1, `expected one error for "${serverName}", got: ${parsed.issues.map(formatConfigIssue).join(' | ')}`);
  return found[0]!;
}

describe('mcpConfigParser', () => {
  let tmp: string;
  before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-config-spec-'));
  });
  after(() => {
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  describe('secrets (found by test:reliability: an ${input:…} in args reached the log)', () => {
    it('lists input values, secret-named env values and header credentials for redaction', async () => {
      const parsed = await parseObject(
        {
          inputs: [{ id: 'tok', type: 'promptString', password: true }],
          servers: {
            s: { command: 'node', args: ['--key=${input:tok}'], env: { API_TOKEN: 'env-secret-1', LOG_LEVEL: 'warn' } },
            h: { type: 'http', url: 'http://localhost/mcp', headers: { Authorization: 'Bearer hdr-secret-2' } },
          },
        },
        { resolveInput: async () => 'input-secret-0' },
      );
      assert.deepEqual([...(server(parsed, 's').secrets ?? [])].sort(), ['env-secret-1', 'input-secret-0']);
      assert.deepEqual(server(parsed, 'h').secrets, ['Bearer hdr-secret-2', 'hdr-secret-2']);
      assert.equal(redactSecrets('node --key=input-secret-0 warn', server(parsed, 's').secrets), 'node --key=[redacted] warn');
    });
  });

  describe('file formats', () => {
    it('reads the VS Code form with comments and trailing commas', async () => {
      const parsed = await parse(`{
        // Prompted once, used by the remote server.
        "inputs": [
          { "id": "token", "type": "promptString", "description": "API token", "password": true, },
        ],
        "servers": {
          /* a local server */
          "fs": { "type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp",], },
          "remote": { "type": "http", "url": "https://example.com/mcp", "headers": { "Authorization": "Bearer \${input:token}" } },
        },
      }`, { resolveInput: async () => 's3cret' });
      assert.deepEqual(parsed.issues, []);
      assert.deepEqual(parsed.inputs, [{ id: 'token', type: 'promptString', description: 'API token', password: true }]);
      assert.deepEqual(parsed.servers.map((s) => s.name), ['fs', 'remote']);
      assert.deepEqual(server(parsed, 'fs').launch, { type: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'], env: {} });
      assert.deepEqual(server(parsed, 'remote').launch, { type: 'http', url: 'https://example.com/mcp', headers: { Authorization: 'Bearer s3cret' } });
      assert.deepEqual(server(parsed, 'fs').options, DEFAULT_ROUTER_OPTIONS);
      assert.deepEqual(server(parsed, 'fs').source, { file: FILE });
    });

    it('reads the Claude Desktop mcpServers form', async () => {
      const parsed = await parseObject({
        mcpServers: {
          memory: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'], env: { MEMORY_FILE_PATH: '/tmp/memory.json' } },
        },
      });
      assert.deepEqual(parsed.issues, []);
      assert.deepEqual(server(parsed, 'memory').launch, {
        type: 'stdio',
        command: 'npx',
        args: ['-y', '@modelcontextprotocol/server-memory'],
        env: { MEMORY_FILE_PATH: '/tmp/memory.json' },
      });
    });

    it('uses "servers" when a file has both "servers" and "mcpServers"', async () => {
      const parsed = await parseObject({ servers: { a: { command: 'a' } }, mcpServers: { b: { command: 'b' } } });
      assert.deepEqual(parsed.servers.map((s) => s.name), ['a']);
    });

    it('warns, and starts nothing, when there is no servers object', async () => {
      const parsed = await parseObject({ inputs: [] });
      assert.deepEqual(parsed.servers, []);
      assert.deepEqual(parsed.issues, [{ file: FILE, severity: 'warning', message: 'No "servers" or "mcpServers" object found; nothing to start.' }]);
    });

    it('refuses a root that is not an object', async () => {
      for (const text of ['[1, 2]', '"servers"', '42', 'null']) {
        const parsed = await parse(text);
        assert.deepEqual(parsed.servers, [], text);
        assert.match(errors(parsed)[0]!.message, /must be a JSON object/, text);
      }
    });

    it('refuses a servers value that is not an object, naming the field', async () => {
      const a = await parseObject({ servers: [] });
      assert.equal(errors(a)[0]!.field, 'servers');
      const b = await parseObject({ mcpServers: 'x' });
      assert.equal(errors(b)[0]!.field, 'mcpServers');
    });
  });

  describe('invalid JSON', () => {
    it('reports the line and column of the first syntax error and starts no server', async () => {
      const text = '{\n  "servers": {\n    "a": { "command": "x" ,, }\n  }\n}';
      const parsed = await parse(text);
      assert.deepEqual(parsed.servers, []);
      assert.equal(parsed.issues.length, 1);
      assert.equal(parsed.issues[0]!.file, FILE);
      assert.match(parsed.issues[0]!.message, /^Invalid JSON at line 3, column 28: PropertyNameExpected\./);
    });

    it('reports line 1 for an error on the first line', async () => {
      const parsed = await parse('{"servers": {"a": {"command": "x"}}');
      assert.match(parsed.issues[0]!.message, /^Invalid JSON at line 1, column 36:/);
    });

    it('counts lines the same in a file with Windows line endings', async () => {
      const parsed = await parse('{\r\n  "servers": {\r\n    "a": { "command": "x" ,, }\r\n  }\r\n}');
      assert.match(parsed.issues[0]!.message, /^Invalid JSON at line 3, /);
    });

    it('refuses an empty file', async () => {
      assert.match((await parse('')).issues[0]!.message, /^Invalid JSON at line 1, column 1/);
    });
  });

  describe('size limit', () => {
    it(`refuses a config larger than MAX_CONFIG_BYTES (${MAX_CONFIG_BYTES}) before parsing it`, async () => {
      const text = `{"servers": {"a": {"command": "x"}}}${' '.repeat(MAX_CONFIG_BYTES)}`;
      const parsed = await parse(text);
      assert.deepEqual(parsed.servers, []);
      assert.equal(parsed.issues.length, 1);
      assert.match(parsed.issues[0]!.message, /larger than 2097152 bytes/);
    });

    it('counts UTF-8 bytes, not characters', async () => {
      const padding = 'é'.repeat(MAX_CONFIG_BYTES / 2 + 1); // fewer characters than the limit, more bytes
      const parsed = await parse(`{"servers": {}, "description": "${padding}"}`);
      assert.match(parsed.issues[0]!.message, /larger than/);
    });

    it('accepts a config just under the limit', async function () {
      // Parses a 2 MiB config (~0.1 s idle); a loaded machine is several times slower.
      this.timeout(20_000);
      const text = `{"servers": {"a": {"command": "x"}}}`;
      const parsed = await parse(text + ' '.repeat(MAX_CONFIG_BYTES - text.length));
      assert.deepEqual(parsed.servers.map((s) => s.name), ['a']);
    });
  });

  describe('server type', () => {
    it('infers stdio from "command" and http from "url"', async () => {
      const parsed = await parseObject({ servers: { local: { command: 'node' }, remote: { url: 'http://localhost:3000/mcp' } } });
      assert.equal(server(parsed, 'local').launch.type, 'stdio');
      assert.equal(server(parsed, 'remote').launch.type, 'http');
    });

    it('prefers stdio when both "command" and "url" are given without a type', async () => {
      const parsed = await parseObject({ servers: { both: { command: 'node', url: 'http://localhost/mcp' } } });
      assert.equal(server(parsed, 'both').launch.type, 'stdio');
    });

    it('keeps an explicit "sse" and maps streamableHttp / streamable-http to http', async () => {
      const parsed = await parseObject({
        servers: {
          s: { type: 'sse', url: 'http://localhost/sse' },
          a: { type: 'streamableHttp', url: 'http://localhost/mcp' },
          b: { type: 'streamable-http', url: 'http://localhost/mcp' },
        },
      });
      assert.equal(server(parsed, 's').launch.type, 'sse');
      assert.equal(server(parsed, 'a').launch.type, 'http');
      assert.equal(server(parsed, 'b').launch.type, 'http');
    });

    it('refuses an unknown type, naming the field, while other servers still parse', async () => {
      const parsed = await parseObject({ servers: { bad: { type: 'websocket', url: 'ws://x' }, good: { command: 'node' } } });
      const issue = theError(parsed, 'bad');
      assert.equal(issue.field, 'type');
      assert.match(issue.message, /Unknown type "websocket"/);
      assert.deepEqual(parsed.servers.map((s) => s.name), ['good']);
    });

    it('refuses a server with neither command nor url', async () => {
      const parsed = await parseObject({ servers: { empty: {}, good: { command: 'node' } } });
      assert.match(theError(parsed, 'empty').message, /Needs "command"/);
      assert.deepEqual(parsed.servers.map((s) => s.name), ['good']);
    });
  });

  describe('errors name the file, the server and the field, and other servers still parse', () => {
    async function onlyBad(entry: unknown): Promise<ConfigIssue> {
      const parsed = await parseObject({ servers: { bad: entry, good: { command: 'node', args: ['ok'] } } });
      assert.deepEqual(parsed.servers.map((s) => s.name), ['good'], 'the good server must still parse');
      const issue = theError(parsed, 'bad');
      assert.equal(issue.file, FILE);
      assert.equal(issue.server, 'bad');
      return issue;
    }

    it('args that are not an array', async () => {
      const issue = await onlyBad({ command: 'node', args: 'server.js --port 3' });
      assert.equal(issue.field, 'args');
      assert.equal(issue.message, '"args" must be an array of strings, got a string.');
    });

    it('an args element that is not a string, by index (numbers are accepted as text)', async () => {
      const issue = await onlyBad({ command: 'node', args: ['a', 3000, { port: 1 }] });
      assert.equal(issue.field, 'args[2]');
      assert.match(issue.message, /must be a string, got a object/);
      const parsed = await parseObject({ servers: { s: { command: 'node', args: ['--port', 3000, '-v'] } } });
      assert.deepEqual(stdio(parsed, 's').args, ['--port', '3000', '-v']);
    });

    it('a missing command for a stdio server', async () => {
      const issue = await onlyBad({ type: 'stdio', args: ['x'] });
      assert.equal(issue.field, 'command');
      assert.equal(issue.message, '"command" is required.');
    });

    it('an empty command', async () => {
      assert.equal((await onlyBad({ command: '   ' })).field, 'command');
    });

    it('a command that is not a string', async () => {
      const issue = await onlyBad({ command: ['node', 'x.js'] });
      assert.equal(issue.field, 'command');
      assert.match(issue.message, /must be a string, got an array/);
    });

    it('a missing url for an http server', async () => {
      const issue = await onlyBad({ type: 'http' });
      assert.equal(issue.field, 'url');
      assert.equal(issue.message, '"url" is required.');
    });

    it('a url that is not a URL', async () => {
      const issue = await onlyBad({ url: 'localhost 3000' });
      assert.equal(issue.field, 'url');
      assert.match(issue.message, /is not a valid URL/);
    });

    it('a url that is not http or https', async () => {
      const issue = await onlyBad({ url: 'ftp://example.com/mcp' });
      assert.equal(issue.field, 'url');
      assert.equal(issue.message, 'Only http: and https: URLs are supported, got ftp:');
    });

    it('an env value that is not a string, number or boolean', async () => {
      const issue = await onlyBad({ command: 'node', env: { PORT: 3000, DEBUG: true, NESTED: { a: 1 } } });
      assert.equal(issue.field, 'env.NESTED');
      const parsed = await parseObject({ servers: { s: { command: 'node', env: { PORT: 3000, DEBUG: true, UNSET: null } } } });
      assert.deepEqual(stdio(parsed, 's').env, { PORT: '3000', DEBUG: 'true' });
    });

    it('env or headers that are not objects', async () => {
      assert.equal((await onlyBad({ command: 'node', env: ['A=1'] })).field, 'env');
      assert.equal((await onlyBad({ url: 'http://localhost/mcp', headers: 'Authorization: x' })).field, 'headers');
    });

    it('a server entry that is not an object', async () => {
      const issue = await onlyBad('npx server');
      assert.equal(issue.field, undefined);
      assert.match(issue.message, /Must be an object/);
    });

    it('an empty server name', async () => {
      const parsed = await parseObject({ servers: { '': { command: 'node' }, good: { command: 'node' } } });
      assert.match(theError(parsed, '').message, /must not be empty/);
      assert.deepEqual(parsed.servers.map((s) => s.name), ['good']);
    });

    describe('router options of the wrong type', () => {
      const cases: Array<[string, unknown, RegExp]> = [
        ['enabled', 'yes', /must be true or false, got a string/],
        ['allowUnvalidatedTools', 1, /must be true or false, got a number/],
        ['toolsAllowed', 'read_*', /must be an array of glob strings/],
        ['toolsDenied', ['ok', 3], /must be an array of glob strings/],
        ['callTimeoutMs', '5000', /must be a whole number of at least 1, got "5000"/],
        ['maxConcurrentCalls', 0, /must be a whole number of at least 1, got 0/],
        ['maxResponseBytes', 1.5, /must be a whole number of at least 1024, got 1.5/],
        ['maxResponseBytes', 512, /must be a whole number of at least 1024, got 512/],
        ['startupTimeoutMs', -1, /must be a whole number of at least 1, got -1/],
        ['protocol', '2025-06-18', /must be one of "auto", "2025-11-25", "2026-07-28", got "2025-06-18"/],
        ['protocol', true, /must be one of "auto", "2025-11-25", "2026-07-28", got true/],
      ];
      for (const [option, value, message] of cases) {
        it(`router.${option} = ${JSON.stringify(value)} (${String(message)})`, async () => {
          const issue = await onlyBad({ command: 'node', router: { [option]: value } });
          assert.equal(issue.field, `router.${option}`);
          assert.match(issue.message, message);
        });
      }

      // BUG: a "router" value that is not an object is reported with field "router." (a trailing dot):
      // parseRouterOptions calls err('', …) and parseServer prefixes every field with "router.".
      // Fix in parseServer (src/core/config/mcpConfigParser.ts): pass
      //   (field, message) => err(field ? `router.${field}` : 'router', message)
      // (and the same for the warn callback) to parseRouterOptions.
      it('router that is not an object is reported on the field "router"', async () => {
        const issue = await onlyBad({ command: 'node', router: 'fast' });
        assert.equal(issue.field, 'router');
        assert.match(issue.message, /"router" must be an object, got a string/);
      });

      it('router that is not an object is refused', async () => {
        const issue = await onlyBad({ command: 'node', router: ['fast'] });
        assert.match(issue.message, /"router" must be an object, got an array/);
      });
    });

    it('formatConfigIssue puts file, server and field in the message', () => {
      assert.equal(
        formatConfigIssue({ file: FILE, server: 'gh', field: 'args[1]', severity: 'error', message: 'must be a string, got a object.' }),
        `Error in ${FILE}, server "gh", field "args[1]": must be a string, got a object.`,
      );
      assert.equal(formatConfigIssue({ file: FILE, severity: 'warning', message: 'x' }), `Warning in ${FILE}: x`);
    });
  });

  describe('unknown fields', () => {
    it('warns about unknown server fields and still parses the server', async () => {
      const parsed = await parseObject({ servers: { s: { command: 'node', comand: 'typo', port: 3 } } });
      assert.deepEqual(errors(parsed), []);
      assert.deepEqual(warnings(parsed).map((w) => [w.server, w.field]), [
        ['s', 'comand'],
        ['s', 'port'],
      ]);
      assert.match(warnings(parsed)[0]!.message, /Unknown field "comand" is ignored/);
      assert.equal(server(parsed, 's').launch.type, 'stdio');
    });

    it('accepts fields VS Code and Claude Desktop use without a warning', async () => {
      const parsed = await parseObject({
        servers: { s: { command: 'node', description: 'd', dev: {}, gallery: true, version: '1', alwaysAllow: [], autoApprove: [], timeout: 5 } },
      });
      assert.deepEqual(parsed.issues, []);
    });

    it('warns about unknown router options and applies the known ones', async () => {
      const parsed = await parseObject({ servers: { s: { command: 'node', router: { timeout: 5, callTimeoutMs: 5000, toolsAllowed: ['read_*'] } } } });
      assert.deepEqual(errors(parsed), []);
      assert.deepEqual(warnings(parsed).map((w) => w.field), ['router.timeout']);
      assert.equal(server(parsed, 's').options.callTimeoutMs, 5000);
      assert.deepEqual(server(parsed, 's').options.toolsAllowed, ['read_*']);
    });
  });

  describe('router options', () => {
    it('defaults every option', async () => {
      const parsed = await parseObject({ servers: { s: { command: 'node' } } });
      assert.deepEqual(server(parsed, 's').options, DEFAULT_ROUTER_OPTIONS);
      assert.equal(server(parsed, 's').options.enabled, true);
    });

    it('applies every valid option', async () => {
      const router = {
        enabled: false,
        allowUnvalidatedTools: true,
        toolsAllowed: ['read_*'],
        toolsDenied: ['read_secret'],
        callTimeoutMs: 1000,
        maxConcurrentCalls: 2,
        maxResponseBytes: 4096,
        startupTimeoutMs: 500,
        roots: false,
        protocol: '2026-07-28',
      };
      const parsed = await parseObject({ servers: { s: { command: 'node', router } } });
      assert.deepEqual(server(parsed, 's').options, router);
    });

    it('tells servers the roots unless a server says "roots": false, and rejects a roots that is not a boolean', async () => {
      const parsed = await parseObject({ servers: { told: { command: 'node' }, kept: { command: 'node', router: { roots: false } }, bad: { command: 'node', router: { roots: 'no' } } } });
      assert.equal(server(parsed, 'told').options.roots, true);
      assert.equal(server(parsed, 'kept').options.roots, false);
      assert.ok(parsed.issues.some((i) => i.server === 'bad' && i.field === 'router.roots' && i.severity === 'error'), JSON.stringify(parsed.issues));
    });

    it('asks each server for its protocol revision unless router.protocol pins one', async () => {
      const parsed = await parseObject({ servers: { asked: { command: 'node' }, old: { command: 'node', router: { protocol: '2025-11-25' } }, modern: { type: 'http', url: 'https://example.com/mcp', router: { protocol: '2026-07-28' } } } });
      assert.equal(server(parsed, 'asked').options.protocol, 'auto');
      assert.equal(server(parsed, 'old').options.protocol, '2025-11-25');
      assert.equal(server(parsed, 'modern').options.protocol, '2026-07-28');
      assert.deepEqual(parsed.issues, []);
    });

    it('disables a server with "disabled": true', async () => {
      const parsed = await parseObject({ servers: { off: { command: 'node', disabled: true }, on: { command: 'node', disabled: false } } });
      assert.equal(server(parsed, 'off').options.enabled, false);
      assert.equal(server(parsed, 'on').options.enabled, true);
    });

    it('disables a server with router.enabled false', async () => {
      const parsed = await parseObject({ servers: { off: { command: 'node', router: { enabled: false } } } });
      assert.equal(server(parsed, 'off').options.enabled, false);
    });

    it('lets "disabled": true win over router.enabled true', async () => {
      const parsed = await parseObject({ servers: { off: { command: 'node', disabled: true, router: { enabled: true } } } });
      assert.equal(server(parsed, 'off').options.enabled, false);
    });

    it('does not share option objects between servers', async () => {
      const parsed = await parseObject({ servers: { a: { command: 'node', disabled: true }, b: { command: 'node' } } });
      assert.equal(server(parsed, 'b').options.enabled, true);
      assert.equal(DEFAULT_ROUTER_OPTIONS.enabled, true);
    });
  });

  describe('variables', () => {
    it('substitutes ${env:VAR} from the given environment', async () => {
      const parsed = await parseObject(
        { servers: { s: { command: '${env:NODE_BIN}', args: ['--token=${env:TOKEN}', 'plain'], env: { KEY: '${env:TOKEN}' } } } },
        { env: { NODE_BIN: '/usr/bin/node', TOKEN: 'abc' } },
      );
      assert.deepEqual(stdio(parsed, 's'), { type: 'stdio', command: '/usr/bin/node', args: ['--token=abc', 'plain'], env: { KEY: 'abc' } });
    });

    it('substitutes an empty string for an unset variable and warns on that field', async () => {
      const parsed = await parseObject({ servers: { s: { command: 'node', args: ['${env:MISSING}x'] } } });
      assert.deepEqual(stdio(parsed, 's').args, ['x']);
      assert.deepEqual(warnings(parsed).map((w) => [w.server, w.field]), [['s', 'args[0]']]);
      assert.match(warnings(parsed)[0]!.message, /MISSING is not set/);
    });

    it('substitutes ${workspaceFolder} and ${userHome}', async () => {
      const parsed = await parseObject(
        { servers: { s: { command: 'node', args: ['${workspaceFolder}/server.js', '${userHome}/.config'] } } },
        { workspaceFolder: '/work/project', env: { HOME: '/home/ada' } },
      );
      assert.deepEqual(stdio(parsed, 's').args, ['/work/project/server.js', '/home/ada/.config']);
    });

    it('refuses ${workspaceFolder} when no folder is open, for that server only', async () => {
      const parsed = await parseObject({ servers: { s: { command: 'node', args: ['${workspaceFolder}/x.js'] }, other: { command: 'node' } } });
      const issue = theError(parsed, 's');
      assert.equal(issue.field, 'args[0]');
      assert.match(issue.message, /no workspace folder is open/);
      assert.deepEqual(parsed.servers.map((s) => s.name), ['other']);
    });

    it('refuses an unknown variable', async () => {
      const parsed = await parseObject({ servers: { s: { command: 'node', args: ['${config:foo}'] } } });
      assert.match(theError(parsed, 's').message, /Unknown variable \$\{config:foo\}/);
    });

    it('substitutes several variables in one value and leaves other text alone', async () => {
      const parsed = await parseObject({ servers: { s: { command: 'node', args: ['$HOME ${env:A}-${env:B} {x}'] } } }, { env: { A: '1', B: '2' } });
      assert.deepEqual(stdio(parsed, 's').args, ['$HOME 1-2 {x}']);
    });

    describe('${input:ID}', () => {
      const inputs = [
        { id: 'token', type: 'promptString', description: 'API token', password: true },
        { id: 'region', type: 'pickString', options: ['eu', 'us', 7], default: 'eu' },
      ];

      it('asks the resolver once per input, even when the input is used several times', async () => {
        const asked: InputDefinition[] = [];
        const parsed = await parseObject(
          {
            inputs,
            servers: {
              a: { url: 'https://example.com/${input:region}/mcp', headers: { Authorization: 'Bearer ${input:token}', 'X-Token': '${input:token}' } },
              b: { command: 'node', env: { TOKEN: '${input:token}', REGION: '${input:region}' } },
            },
          },
          {
            resolveInput: async (input) => {
              asked.push(input);
              return `<${input.id}>`;
            },
          },
        );
        assert.deepEqual(errors(parsed), []);
        assert.deepEqual(
          asked.map((i) => i.id),
          ['region', 'token'],
        );
        assert.deepEqual(asked[1], { id: 'token', type: 'promptString', description: 'API token', password: true });
        assert.deepEqual(asked[0], { id: 'region', type: 'pickString', default: 'eu', options: ['eu', 'us'] });
        assert.deepEqual(server(parsed, 'a').launch, { type: 'http', url: 'https://example.com/<region>/mcp', headers: { Authorization: 'Bearer <token>', 'X-Token': '<token>' } });
        assert.deepEqual(stdio(parsed, 'b').env, { TOKEN: '<token>', REGION: '<region>' });
      });

      it('fails only the servers that need an input the resolver gives no value for', async () => {
        let calls = 0;
        const parsed = await parseObject(
          {
            inputs,
            servers: {
              needsToken: { command: 'node', args: ['--token', '${input:token}'] },
              plain: { command: 'node' },
              needsRegion: { command: 'node', args: ['${input:region}'] },
            },
          },
          {
            resolveInput: async (input) => {
              calls++;
              return input.id === 'region' ? 'eu' : undefined;
            },
          },
        );
        const issue = theError(parsed, 'needsToken');
        assert.equal(issue.field, 'args[1]');
        assert.match(issue.message, /No value was given for input "token"/);
        assert.deepEqual(parsed.servers.map((s) => s.name), ['plain', 'needsRegion']);
        assert.equal(calls, 2);
      });

      it('fails the server when there is no resolver at all', async () => {
        const parsed = await parseObject({ inputs, servers: { s: { command: 'node', args: ['${input:token}'] } } });
        assert.match(theError(parsed, 's').message, /No value was given for input "token"/);
      });

      it('refuses an input that is not declared, without asking the resolver', async () => {
        let calls = 0;
        const parsed = await parseObject(
          { inputs, servers: { s: { command: 'node', args: ['${input:undeclared}'] }, ok: { command: 'node' } } },
          {
            resolveInput: async () => {
              calls++;
              return 'x';
            },
          },
        );
        const issue = theError(parsed, 's');
        assert.equal(issue.field, 'args[0]');
        assert.match(issue.message, /refers to an input that is not declared in "inputs"/);
        assert.equal(calls, 0);
        assert.deepEqual(parsed.servers.map((s) => s.name), ['ok']);
      });
    });

    describe('inputs', () => {
      it('refuses "inputs" that is not an array', async () => {
        const parsed = await parseObject({ inputs: { id: 'x' }, servers: {} });
        assert.deepEqual(errors(parsed).map((i) => i.field), ['inputs']);
        assert.deepEqual(parsed.inputs, []);
      });

      it('refuses an input without a string id, by index, and keeps the others', async () => {
        const parsed = await parseObject({ inputs: [{ type: 'promptString' }, { id: 'ok' }], servers: {} });
        assert.deepEqual(errors(parsed).map((i) => i.field), ['inputs[0]']);
        assert.deepEqual(parsed.inputs, [{ id: 'ok', type: 'promptString' }]);
      });
    });
  });

  describe('cwd', () => {
    it('resolves a relative cwd against the workspace folder', async () => {
      const parsed = await parseObject({ servers: { s: { command: 'node', cwd: 'tools/server' } } }, { workspaceFolder: '/work/project' });
      assert.equal(stdio(parsed, 's').cwd, path.resolve('/work/project', 'tools/server'));
    });

    it('resolves a relative cwd against the config file folder when no workspace is open', async () => {
      const parsed = await parseObject({ servers: { s: { command: 'node', cwd: 'server' } } });
      assert.equal(stdio(parsed, 's').cwd, path.resolve('/configs', 'server'));
    });

    it('keeps an absolute cwd', async () => {
      const parsed = await parseObject({ servers: { s: { command: 'node', cwd: '/opt/server' } } }, { workspaceFolder: '/work/project' });
      assert.equal(stdio(parsed, 's').cwd, '/opt/server');
    });
  });

  describe('envFile', () => {
    const ENV_TEXT = [
      '# database settings',
      'export DB_HOST=localhost',
      'DB_PASSWORD="p@ss word # not a comment"',
      "SINGLE='literal \\n $HOME'",
      'PLAIN=value # a comment',
      'this line is wrong',
      '',
      'EMPTY=',
      'OVERRIDDEN=from-file',
      '1BAD=secret-value',
    ].join('\n');

    it('reads a relative envFile from the workspace folder and reports bad lines by number only', async () => {
      const workspace = fs.mkdtempSync(path.join(tmp, 'ws-'));
      fs.writeFileSync(path.join(workspace, '.env'), ENV_TEXT);
      const parsed = await parseObject({ servers: { s: { command: 'node', envFile: '.env', env: { OVERRIDDEN: 'from-config' } } } }, { workspaceFolder: workspace });
      assert.deepEqual(errors(parsed), []);
      assert.deepEqual(stdio(parsed, 's').env, {
        DB_HOST: 'localhost',
        DB_PASSWORD: 'p@ss word # not a comment',
        SINGLE: 'literal \\n $HOME',
        PLAIN: 'value',
        EMPTY: '',
        OVERRIDDEN: 'from-config',
      });
      const w = warnings(parsed);
      assert.deepEqual(w.map((i) => [i.server, i.field]), [
        ['s', 'envFile'],
        ['s', 'envFile'],
      ]);
      assert.match(w[0]!.message, /^Line 6 of .*\.env is not KEY=VALUE/);
      assert.match(w[1]!.message, /^Line 10 of /);
      for (const issue of w) {
        assert.doesNotMatch(issue.message, /secret-value|this line is wrong/, 'bad lines may hold secrets and must not be quoted');
      }
    });

    it('substitutes variables in the envFile path', async () => {
      const workspace = fs.mkdtempSync(path.join(tmp, 'ws-'));
      fs.writeFileSync(path.join(workspace, 'server.env'), 'A=1\n');
      const parsed = await parseObject({ servers: { s: { command: 'node', envFile: '${workspaceFolder}/server.env' } } }, { workspaceFolder: workspace });
      assert.deepEqual(stdio(parsed, 's').env, { A: '1' });
    });

    it('reads a relative envFile next to the config file when no workspace is open', async () => {
      const dir = fs.mkdtempSync(path.join(tmp, 'cfg-'));
      fs.writeFileSync(path.join(dir, 'local.env'), 'LOCAL=yes\n');
      fs.writeFileSync(path.join(dir, 'mcp.json'), JSON.stringify({ servers: { s: { command: 'node', envFile: 'local.env' } } }));
      const parsed = await loadMcpConfigFile(path.join(dir, 'mcp.json'), { env: {} });
      assert.deepEqual(stdio(parsed, 's').env, { LOCAL: 'yes' });
    });

    it('fails only that server when the envFile cannot be read', async () => {
      const parsed = await parseObject({ servers: { s: { command: 'node', envFile: path.join(tmp, 'missing.env') }, ok: { command: 'node' } } });
      const issue = theError(parsed, 's');
      assert.equal(issue.field, 'envFile');
      assert.match(issue.message, /Cannot read env file .*missing\.env/);
      assert.deepEqual(parsed.servers.map((s) => s.name), ['ok']);
    });

    describe('parseEnvFile', () => {
      it('reads KEY=VALUE lines, skipping blank lines and comments', () => {
        assert.deepEqual(parseEnvFile('A=1\n\n# comment\n   # indented comment\nB = two \n'), { values: { A: '1', B: 'two' }, badLines: [] });
      });

      it('accepts the export prefix and keys with dots and dashes', () => {
        assert.deepEqual(parseEnvFile('export A=1\nexport   my.key-name=x').values, { A: '1', 'my.key-name': 'x' });
      });

      it('unquotes double-quoted values and expands \\n and \\" in them', () => {
        assert.deepEqual(parseEnvFile('A="line1\\nline2"\nB="say \\"hi\\""').values, { A: 'line1\nline2', B: 'say "hi"' });
      });

      it('keeps single-quoted values literally', () => {
        assert.deepEqual(parseEnvFile("A='x\\ny # z'").values, { A: 'x\\ny # z' });
      });

      it('cuts an unquoted value at " #" but keeps a # inside a word', () => {
        assert.deepEqual(parseEnvFile('A=value # note\nB=abc#def').values, { A: 'value', B: 'abc#def' });
      });

      it('keeps everything after the first "="', () => {
        assert.deepEqual(parseEnvFile('URL=postgres://u:p@h/db?x=1').values, { URL: 'postgres://u:p@h/db?x=1' });
      });

      it('handles Windows line endings', () => {
        assert.deepEqual(parseEnvFile('A=1\r\nB="2"\r\n'), { values: { A: '1', B: '2' }, badLines: [] });
      });

      it('lets a later line win over an earlier one', () => {
        assert.deepEqual(parseEnvFile('A=1\nA=2').values, { A: '2' });
      });

      it('reports lines that are not KEY=VALUE by their 1-based number', () => {
        assert.deepEqual(parseEnvFile('OK=1\nno equals sign\n=novalue\n9LIVES=x\nexport\nOK2=2').badLines, [2, 3, 4, 5]);
      });

      it('keeps __proto__ as an own key without touching the prototype', () => {
        const { values } = parseEnvFile('__proto__=x\nconstructor=y');
        assert.equal(Object.getPrototypeOf(values), Object.prototype);
        assert.equal(Object.getOwnPropertyDescriptor(values, '__proto__')!.value, 'x');
        assert.equal(Object.getOwnPropertyDescriptor(values, 'constructor')!.value, 'y');
      });
    });
  });

  describe('fingerprint', () => {
    const config = { servers: { a: { command: 'node', args: ['server.js'], env: { A: '1' }, router: { callTimeoutMs: 5000 } } } };

    it('is a 16-digit hex digest', async () => {
      assert.match(server(await parseObject(config), 'a').fingerprint, /^[0-9a-f]{16}$/);
    });

    it('is the same for identical definitions, across parses, files and server names', async () => {
      const first = server(await parseObject(config), 'a').fingerprint;
      const again = server(await parseObject(config, { file: '/other/place.json' }), 'a').fingerprint;
      const renamed = server(await parseObject({ servers: { b: config.servers.a } }), 'b').fingerprint;
      assert.equal(again, first);
      assert.equal(renamed, first);
    });

    it('is the same when only ignored fields change', async () => {
      const first = server(await parseObject(config), 'a').fingerprint;
      const described = server(await parseObject({ servers: { a: { ...config.servers.a, description: 'now documented' } } }), 'a').fingerprint;
      assert.equal(described, first);
    });

    it('changes when the args, env, command or a router option change', async () => {
      const base = server(await parseObject(config), 'a').fingerprint;
      const variants = [
        { ...config.servers.a, args: ['server.js', '--verbose'] },
        { ...config.servers.a, env: { A: '2' } },
        { ...config.servers.a, command: 'bun' },
        { ...config.servers.a, router: { callTimeoutMs: 6000 } },
        { ...config.servers.a, disabled: true },
      ];
      const prints = await Promise.all(variants.map(async (v) => server(await parseObject({ servers: { a: v } }), 'a').fingerprint));
      for (const [i, p] of prints.entries()) assert.notEqual(p, base, `variant ${i}`);
      assert.equal(new Set(prints).size, prints.length);
    });

    it('changes when a substituted value changes', async () => {
      const withEnv = { servers: { a: { command: 'node', args: ['${env:PORT}'] } } };
      const a = server(await parseObject(withEnv, { env: { PORT: '1' } }), 'a').fingerprint;
      const b = server(await parseObject(withEnv, { env: { PORT: '2' } }), 'a').fingerprint;
      assert.notEqual(a, b);
    });
  });

  describe('loadMcpConfigFile', () => {
    it('reads a file and names it in the servers it returns', async () => {
      const file = path.join(fs.mkdtempSync(path.join(tmp, 'load-')), 'mcp.json');
      fs.writeFileSync(file, '{ "servers": { "s": { "command": "node" }, } }');
      const parsed = await loadMcpConfigFile(file, { env: {} });
      assert.deepEqual(parsed.issues, []);
      assert.deepEqual(server(parsed, 's').source, { file });
    });

    it('names the file in its issues', async () => {
      const file = path.join(fs.mkdtempSync(path.join(tmp, 'load-')), 'mcp.json');
      fs.writeFileSync(file, JSON.stringify({ servers: { s: { command: 'node', args: 'x' } } }));
      const parsed = await loadMcpConfigFile(file, { env: {} });
      assert.equal(theError(parsed, 's').file, file);
    });

    it('reports a missing file as an error, not an exception', async () => {
      const file = path.join(tmp, 'does-not-exist.json');
      const parsed = await loadMcpConfigFile(file, { env: {} });
      assert.deepEqual(parsed, {
        servers: [],
        inputs: [],
        issues: [{ file, severity: 'error', message: 'Cannot read the config: the file does not exist. Check the path.' }],
      });
    });

    it('reports a path that cannot be read as a file', async () => {
      const parsed = await loadMcpConfigFile(tmp, { env: {} });
      assert.equal(parsed.issues.length, 1);
      assert.match(parsed.issues[0]!.message, /^Cannot read the config: /);
    });
  });

  describe('redactUrl', () => {
    it('hides user info and the query of a valid URL', () => {
      const shown = redactUrl('https://user:pw@example.com/mcp?token=s3cr3t');
      assert.doesNotMatch(shown, /pw|s3cr3t|user/);
      assert.match(shown, /^https:\/\/\*\*\*@example\.com\/mcp\?/);
    });

    it('leaves a URL without secrets as it is', () => {
      assert.equal(redactUrl('http://localhost:3000/mcp'), 'http://localhost:3000/mcp');
    });

    // BUG: when the URL does not parse, redactUrl returns it as written (up to 80 characters), so a
    // mistyped URL such as "https//example.com/mcp?token=…" puts the token into the error message, against
    // the promise that "error messages show neither" user-info nor query.
    // Fix in redactUrl's catch branch (src/core/config/mcpConfigParser.ts):
    //   const bare = url.replace(/[?#].*$/s, '?…').replace(/^([^/]*\/\/)?[^/@]*@/, '$1***@');
    //   return bare.length > 80 ? `${bare.slice(0, 77)}…` : bare;
    it('hides the query and user info of a URL that does not parse', async () => {
      assert.doesNotMatch(redactUrl('https//example.com/mcp?token=s3cr3t'), /s3cr3t/);
      assert.doesNotMatch(redactUrl('http://user:pw@exa mple.com/mcp'), /pw/);
      const parsed = await parseObject({ servers: { s: { url: 'https//example.com/mcp?token=s3cr3t' } } });
      assert.doesNotMatch(theError(parsed, 's').message, /s3cr3t/);
    });
  });
});
