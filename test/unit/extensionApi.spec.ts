import assert from 'node:assert/strict';
import { TOOL_ROUTER_API_VERSION, type ToolRouterApi } from '../../src/extension/api';
import { INTERNALS_KEY, internalsOf, withInternals, type ToolRouterInternals } from '../../src/extension/internals';

/** Other extensions copy api.ts, and the test bundles import internals.ts: neither may need vscode at run time. */
describe('the API other extensions use', () => {
  const api = (): ToolRouterApi => ({
    version: TOOL_ROUTER_API_VERSION,
    listServers: () => [],
    listTools: () => [],
    selectTools: (prompt) => Promise.resolve({ prompt, method: 'keyword-only', tools: [] }),
    callTool: () => Promise.resolve(undefined),
    onDidChange: () => ({ dispose: () => undefined }),
    whenSettled: () => Promise.resolve(),
  });

  it('loads under plain Node and carries its version', () => {
    assert.equal(api().version, 1);
  });

  it('carries the internals under a shared symbol, out of the listed members', () => {
    const internals = { activation: { startedAt: 0, ms: 1 } } as unknown as ToolRouterInternals;
    const exported = withInternals(api(), internals);
    assert.deepEqual(Object.keys(exported).sort(), ['callTool', 'listServers', 'listTools', 'onDidChange', 'selectTools', 'version', 'whenSettled']);
    assert.equal(INTERNALS_KEY, Symbol.for('mcp-tool-router.internals'));
    assert.equal(internalsOf(exported), internals);
    assert.throws(() => internalsOf(api()), /carries no internals/);
  });
});
