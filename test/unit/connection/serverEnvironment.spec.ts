import assert from 'node:assert/strict';
import { ROUTER_ENV_PREFIX, serverEnvironment } from '../../../src/core/connection/stdioProcessTransport';

describe('serverEnvironment', () => {
  const parent = { PATH: '/usr/bin', HOME: '/home/me', HTTPS_PROXY: 'http://proxy:3128', LANG: 'C.UTF-8' };

  it("keeps the parent's ordinary environment and adds what the server is configured with", () => {
    assert.deepEqual(serverEnvironment(parent, { API_TOKEN: 'abc' }), { ...parent, API_TOKEN: 'abc' });
  });

  it("never passes on the router's own variables, whatever their case", () => {
    const env = serverEnvironment(
      { ...parent, MCP_TOOL_ROUTER_INPUT_github_token: 'ghp_secret', MCP_TOOL_ROUTER_INPUT_X: 'x-secret', mcp_tool_router_input_y: 'y-secret', Mcp_Tool_Router_Other: 'o' },
      {},
    );
    assert.deepEqual(env, parent);
    assert.ok(Object.keys(env).every((k) => !k.toUpperCase().startsWith(ROUTER_ENV_PREFIX)));
  });

  it('keeps variables that only look alike (the prefix must start the name)', () => {
    const env = serverEnvironment({ MY_MCP_TOOL_ROUTER_INPUT_X: 'kept', MCP_TOOL_ROUTERX: 'kept too' }, {});
    assert.deepEqual(env, { MY_MCP_TOOL_ROUTER_INPUT_X: 'kept', MCP_TOOL_ROUTERX: 'kept too' });
  });

  it('lets the configuration win over the parent, and pass a router variable on purpose', () => {
    const env = serverEnvironment({ ...parent, MCP_TOOL_ROUTER_INPUT_X: 'from parent' }, { PATH: '/opt/tool/bin', MCP_TOOL_ROUTER_INPUT_X: 'configured' });
    assert.equal(env['PATH'], '/opt/tool/bin');
    assert.equal(env['MCP_TOOL_ROUTER_INPUT_X'], 'configured');
  });

  it('skips unset parent variables and keeps __proto__ as an ordinary variable', () => {
    const configured = JSON.parse('{"__proto__":"p"}') as Record<string, string>;
    const env = serverEnvironment({ UNSET: undefined, HOME: '/h' }, configured);
    assert.deepEqual(Object.keys(env).sort(), ['HOME', '__proto__']);
    assert.equal(Object.getPrototypeOf(env), Object.prototype);
    assert.equal(Object.getOwnPropertyDescriptor(env, '__proto__')?.value, 'p');
  });

  it("does not change its inputs, so one server's configuration cannot reach another's", () => {
    const parentCopy = { ...parent };
    const a = serverEnvironment(parentCopy, { A_TOKEN: 'a' });
    const b = serverEnvironment(parentCopy, { B_TOKEN: 'b' });
    assert.deepEqual(parentCopy, parent);
    assert.equal(a['B_TOKEN'], undefined);
    assert.equal(b['A_TOKEN'], undefined);
  });
});
