import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { UsageError, parseCliArgs } from '../../src/cli/cliArgs';
import { runCli } from '../../src/cli/main';

/** Runs the CLI with captured output. Every case here stops before any server would be started. */
async function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(
    argv,
    (s) => {
      out += s;
    },
    (s) => {
      err += s;
    },
  );
  return { code, out, err };
}

function usageError(argv: string[]): UsageError {
  try {
    parseCliArgs(argv);
  } catch (error) {
    assert.ok(error instanceof UsageError, `expected a UsageError, got ${String(error)}`);
    return error;
  }
  assert.fail(`expected ${JSON.stringify(argv)} to be refused`);
}

describe('CLI', () => {
  describe('parseCliArgs', () => {
    it('has defaults for everything', () => {
      const opts = parseCliArgs([]);
      assert.equal(opts.command, '');
      assert.deepEqual(opts.positional, []);
      assert.deepEqual(opts.configs, []);
      assert.equal(opts.json, false);
      assert.equal(opts.args, undefined);
      assert.equal(opts.timeoutMs, undefined);
      assert.equal(opts.waitMs, 60_000);
      assert.equal(opts.workspace, process.cwd());
      assert.deepEqual(opts.inputs, new Map());
      assert.equal(opts.verbose, false);
    });

    it('reads every option', () => {
      const opts = parseCliArgs([
        'call',
        'github_search',
        '--args',
        '{"q": "mcp"}',
        '--config',
        'a.json',
        '--config',
        'b.json',
        '--json',
        '--timeout',
        '5000',
        '--wait',
        '100',
        '--workspace',
        'some/dir',
        '--input',
        'token=abc=def',
        '--input',
        'empty=',
        '--verbose',
      ]);
      assert.equal(opts.command, 'call');
      assert.deepEqual(opts.positional, ['github_search']);
      assert.equal(opts.args, '{"q": "mcp"}');
      assert.deepEqual(opts.configs, ['a.json', 'b.json']);
      assert.equal(opts.json, true);
      assert.equal(opts.timeoutMs, 5000);
      assert.equal(opts.waitMs, 100);
      assert.equal(opts.workspace, path.resolve('some/dir'));
      assert.deepEqual(opts.inputs, new Map([
        ['token', 'abc=def'],
        ['empty', ''],
      ]));
      assert.equal(opts.verbose, true);
    });

    it('accepts options before the command', () => {
      const opts = parseCliArgs(['--config', 'a.json', 'tools', '--json']);
      assert.equal(opts.command, 'tools');
      assert.deepEqual(opts.configs, ['a.json']);
    });

    it('collects extra words as positional arguments', () => {
      assert.deepEqual(parseCliArgs(['call', 'one', 'two']).positional, ['one', 'two']);
    });

    it('quarantines flagged tools from serve unless --no-quarantine', () => {
      assert.equal(parseCliArgs(['serve']).quarantine, true);
      assert.equal(parseCliArgs(['serve', '--no-quarantine']).quarantine, false);
    });

    it('lets a later --input for the same id win', () => {
      assert.equal(parseCliArgs(['--input', 'a=1', '--input', 'a=2']).inputs.get('a'), '2');
    });

    it('turns -h and --help into the help command', () => {
      assert.equal(parseCliArgs(['-h']).command, 'help');
      assert.equal(parseCliArgs(['tools', '--help']).command, 'help');
    });

    for (const option of ['--config', '--args', '--timeout', '--wait', '--workspace', '--input']) {
      it(`refuses ${option} without a value`, () => {
        assert.equal(usageError(['tools', option]).message, `${option} needs a value.`);
      });
    }

    for (const option of ['--timeout', '--wait']) {
      for (const bad of ['abc', '0', '-5', '1.5', '', 'NaN', 'Infinity']) {
        it(`refuses ${option} ${JSON.stringify(bad)}`, () => {
          assert.equal(usageError([option, bad]).message, `${option} needs a positive whole number of milliseconds, got "${bad}".`);
        });
      }
    }

    it('refuses --input without ID=VALUE', () => {
      assert.match(usageError(['--input', 'token']).message, /--input needs ID=VALUE, got "token"/);
      assert.match(usageError(['--input', '=value']).message, /--input needs ID=VALUE/);
    });

    it('shortens a long --input in its error message', () => {
      const message = usageError(['--input', 's'.repeat(100)]).message;
      assert.ok(message.includes(`"${'s'.repeat(40)}"`), message);
      assert.ok(!message.includes('s'.repeat(41)), message);
    });

    it('refuses an unknown option', () => {
      assert.equal(usageError(['tools', '--frobnicate']).message, 'Unknown option --frobnicate.');
    });

    it('UsageError is an Error', () => {
      assert.ok(usageError(['--nope']) instanceof Error);
    });
  });

  describe('runCli', () => {
    let tmp: string;
    before(() => {
      tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-spec-'));
    });
    after(() => {
      fs.rmSync(tmp, { recursive: true, force: true });
    });

    it('prints usage to stderr and returns 1 with no command', async () => {
      const r = await cli([]);
      assert.equal(r.code, 1);
      assert.match(r.err, /^Usage:/);
      assert.match(r.err, /mcp-tool-router call {4}NAME --args JSON --config FILE/);
      assert.equal(r.out, '');
    });

    it('prints usage to stdout and returns 0 for --help', async () => {
      const r = await cli(['--help']);
      assert.equal(r.code, 0);
      assert.match(r.out, /^Usage:/);
      assert.equal(r.err, '');
    });

    it('returns 1 for an unknown command and names it', async () => {
      const r = await cli(['frobnicate', '--config', 'x.json']);
      assert.equal(r.code, 1);
      assert.match(r.err, /^Unknown command "frobnicate"\./);
      assert.match(r.err, /Usage:/);
      assert.equal(r.out, '');
    });

    for (const command of [['tools'], ['servers'], ['call', 'github_search']]) {
      it(`returns 1 for "${command.join(' ')}" without --config`, async () => {
        const r = await cli(command);
        assert.equal(r.code, 1);
        assert.match(r.err, /^--config FILE is required\./);
        assert.match(r.err, /Usage:/);
        assert.equal(r.out, '');
      });
    }

    it('returns 1 for call without a tool name', async () => {
      const r = await cli(['call', '--config', 'x.json']);
      assert.equal(r.code, 1);
      assert.match(r.err, /^call needs a tool name\./);
    });

    it('returns 1 for a bad option, with the reason and the usage', async () => {
      const r = await cli(['tools', '--config', 'x.json', '--timeout', 'soon']);
      assert.equal(r.code, 1);
      assert.match(r.err, /^--timeout needs a positive whole number of milliseconds, got "soon"\./);
      assert.match(r.err, /Usage:/);
    });

    it('returns 1 and names the file when the config does not exist', async () => {
      const missing = path.join(tmp, 'missing.json');
      const r = await cli(['tools', '--config', missing]);
      assert.equal(r.code, 1);
      assert.ok(r.err.includes(`Error in ${missing}: Cannot read the config: the file does not exist.`), r.err);
      assert.equal(r.out, '');
    });

    it('returns 1 and reports the position when the config is not valid JSON', async () => {
      const file = path.join(tmp, 'broken.json');
      fs.writeFileSync(file, '{\n  "servers": {\n');
      const r = await cli(['call', 'x_y', '--config', file]);
      assert.equal(r.code, 1);
      assert.match(r.err, /Invalid JSON at line 3, column \d+/);
    });
  });
});
