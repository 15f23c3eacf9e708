import assert from 'node:assert/strict';
import * as path from 'node:path';
import { parseMcpConfig } from '../../src/core/config/mcpConfigParser';
import { runChoices } from '../../src/cli/main';

/** The config's top-level `router` block (the CLI's policy and roots), and how flags and files combine. */

const parse = (config: unknown, file = '/work/cfg/mcp.json') => parseMcpConfig(JSON.stringify(config), { file });

describe('config router block', () => {
  it('reads the policy, the allow list and roots (relative to the config file)', async () => {
    const parsed = await parse({ router: { destructiveTools: 'never', allowedDestructiveTools: ['memory_delete_entities'], roots: ['.', '../other', '/abs'] }, servers: {} });
    assert.deepEqual(parsed.router, { destructiveTools: 'never', allowedDestructiveTools: ['memory_delete_entities'], roots: [path.resolve('/work/cfg'), path.resolve('/work/other'), path.resolve('/abs')] });
  });

  it('names each bad field and leaves it out', async () => {
    const parsed = await parse({ router: { destructiveTools: 'sometimes', allowedDestructiveTools: 'x', roots: [1], colour: 'red' }, servers: {} });
    assert.deepEqual(parsed.router, {});
    const fields = parsed.issues.map((i) => `${i.severity}:${i.field}`).sort();
    assert.deepEqual(fields, ['error:router.allowedDestructiveTools', 'error:router.destructiveTools', 'error:router.roots', 'warning:router.colour']);
    assert.match(parsed.issues.find((i) => i.field === 'router.destructiveTools')!.message, /"confirm", "never" or "always"/);
    const notObject = await parse({ router: [], servers: {} });
    assert.ok(notObject.issues.some((i) => i.field === 'router' && i.severity === 'error'));
  });

  it('accepts a file that starts with a byte order mark', async () => {
    const parsed = await parseMcpConfig(`\ufeff${JSON.stringify({ servers: { s: { command: 'node' } } })}`, { file: 'bom.json' });
    assert.deepEqual(parsed.issues, []);
    assert.equal(parsed.servers[0]?.name, 's');
  });
});

describe('the CLI run\'s choices', () => {
  const none = { allowDestructive: [], roots: [] };
  it('defaults to confirm with no roots: the current directory is never announced', () => {
    const { policy, roots } = runChoices(none, []);
    assert.equal(policy.destructiveTools, 'confirm');
    assert.deepEqual(roots, []);
  });

  it('lets a flag choose the policy, and otherwise keeps the strictest policy of the files', () => {
    assert.equal(runChoices(none, [{ destructiveTools: 'always' }, { destructiveTools: 'never' }, {}]).policy.destructiveTools, 'never');
    assert.equal(runChoices(none, [{ destructiveTools: 'always' }, { destructiveTools: 'confirm' }]).policy.destructiveTools, 'confirm');
    assert.equal(runChoices({ ...none, destructiveTools: 'always' }, [{ destructiveTools: 'never' }]).policy.destructiveTools, 'always');
  });

  it('joins allow lists and roots of flags and files, without repeats', () => {
    const { policy, roots } = runChoices({ allowDestructive: ['a_x'], roots: ['/r1'] }, [{ allowedDestructiveTools: ['a_x', 'b_y'], roots: ['/r1', '/r2'] }]);
    assert.deepEqual(policy.allowedDestructiveTools, ['a_x', 'b_y']);
    assert.deepEqual(roots, ['/r1', '/r2']);
    assert.match(policy.hints.policy, /--destructive-tools always/);
  });
});
