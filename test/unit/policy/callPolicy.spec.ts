import assert from 'node:assert/strict';
import { callPolicy, CLI_ALLOW_HINTS, decideCall, destructivePolicyFrom, offerNote, offerTool, type CallAudience, type DestructivePolicy } from '../../../src/core/policy/callPolicy';

/** The one call policy every surface asks (selection, search, @router, Call Tool, the gateway, the CLI). */

const DELETE = { name: 'memory_delete_entities', annotations: { destructiveHint: true } };
const READ = { name: 'memory_read_graph', annotations: { readOnlyHint: true } };
const PLAIN = { name: 'memory_create_entities' };
const POLICIES: readonly DestructivePolicy[] = ['confirm', 'never', 'always'];
const AUDIENCES: readonly CallAudience[] = [{ canAsk: true }, { canAsk: false }, { canAsk: false, confirmedByPerson: true }, { canAsk: true, confirmedByPerson: true }];

describe('call policy', () => {
  it('runs tools that are not marked destructive under every policy, for every caller', () => {
    for (const p of POLICIES) for (const a of AUDIENCES) for (const tool of [READ, PLAIN]) assert.deepEqual(decideCall(callPolicy(p), tool, a), { verdict: 'run' });
  });

  it('under confirm: asks a caller who can ask, runs what a person named, and refuses everyone else', () => {
    const policy = callPolicy('confirm');
    assert.equal(decideCall(policy, DELETE, { canAsk: true }).verdict, 'ask');
    assert.equal(decideCall(policy, DELETE, { canAsk: false, confirmedByPerson: true }).verdict, 'run');
    const refused = decideCall(policy, DELETE, { canAsk: false });
    assert.equal(refused.verdict, 'refuse');
    assert.ok(refused.verdict === 'refuse' && refused.why === 'cannot-ask');
    // The refusal names the tool and both ways to allow it.
    assert.ok(refused.verdict === 'refuse' && refused.message.includes('"memory_delete_entities"'));
    assert.match(refused.verdict === 'refuse' ? refused.message : '', /allowDestructiveTools to "always"/);
    assert.match(refused.verdict === 'refuse' ? refused.message : '', /add "memory_delete_entities" to toolRouter\.selection\.allowedDestructiveTools/);
  });

  it('under never: refuses every caller, a person naming the tool included', () => {
    for (const a of AUDIENCES) {
      const verdict = decideCall(callPolicy('never'), DELETE, a);
      assert.equal(verdict.verdict, 'refuse');
      assert.ok(verdict.verdict === 'refuse' && verdict.why === 'never');
    }
  });

  it('under always, and for allow-listed tools under confirm and never: runs without asking', () => {
    for (const a of AUDIENCES) assert.equal(decideCall(callPolicy('always'), DELETE, a).verdict, 'run');
    for (const p of ['confirm', 'never'] as const) for (const a of AUDIENCES) assert.equal(decideCall(callPolicy(p, ['memory_delete_entities']), DELETE, a).verdict, 'run');
    assert.equal(decideCall(callPolicy('confirm', ['other_tool']), DELETE, { canAsk: false }).verdict, 'refuse', 'the allow list is by exact name');
  });

  it('offers what can run, says which ones ask, and leaves out what would be refused, with the reason', () => {
    assert.deepEqual(offerTool(callPolicy('confirm'), DELETE, { canAsk: true }), { offered: true, asks: true });
    assert.equal(offerNote(offerTool(callPolicy('confirm'), DELETE, { canAsk: true })), 'asks the user before it runs');
    assert.deepEqual(offerTool(callPolicy('always'), DELETE, { canAsk: true }), { offered: true, asks: false });
    assert.equal(offerNote(offerTool(callPolicy('always'), DELETE, { canAsk: true })), undefined, 'under always the model is not told it asks');
    const never = offerTool(callPolicy('never'), DELETE, { canAsk: true });
    assert.ok(!never.offered && /policy is "never"/.test(never.reason));
    const cannotAsk = offerTool(callPolicy('confirm'), DELETE, { canAsk: false });
    assert.ok(!cannotAsk.offered && /nobody can be asked/.test(cannotAsk.reason));
  });

  it('where the router runs the model (@router), tools marked neither read-only nor non-destructive ask too', () => {
    const atRouter = { canAsk: true, asksForUnmarked: true };
    const unmarked = [PLAIN, { name: 'x_run', annotations: { readOnlyHint: false } }, { name: 'x_open', annotations: { openWorldHint: true } }];
    for (const tool of unmarked) {
      assert.equal(decideCall(callPolicy('confirm'), tool, atRouter).verdict, 'ask', tool.name);
      assert.equal(decideCall(callPolicy('never'), tool, atRouter).verdict, 'ask', `${tool.name}: never hides only marked tools`);
      assert.equal(decideCall(callPolicy('always'), tool, atRouter).verdict, 'run');
      assert.equal(decideCall(callPolicy('confirm', [tool.name]), tool, atRouter).verdict, 'run');
      assert.equal(decideCall(callPolicy('confirm'), tool, { ...atRouter, confirmedByPerson: true }).verdict, 'run');
      // Elsewhere the client sees the server's hints and asks by its own rules.
      assert.equal(decideCall(callPolicy('confirm'), tool, { canAsk: false }).verdict, 'run');
    }
    for (const tool of [READ, { name: 'x_add', annotations: { destructiveHint: false } }]) assert.equal(decideCall(callPolicy('confirm'), tool, atRouter).verdict, 'run', tool.name);
    const refused = decideCall(callPolicy('confirm'), PLAIN, { canAsk: false, asksForUnmarked: true });
    assert.ok(refused.verdict === 'refuse' && refused.why === 'cannot-ask');
    assert.match(refused.verdict === 'refuse' ? refused.message : '', /"memory_create_entities" is not marked read-only or non-destructive by its server and the destructive-tools policy is "confirm"/);
    const underNever = decideCall(callPolicy('never'), PLAIN, { canAsk: false, asksForUnmarked: true });
    assert.match(underNever.verdict === 'refuse' ? underNever.message : '', /the destructive-tools policy is "never", but this client cannot ask/, 'the message names the policy in force');
    assert.deepEqual(offerTool(callPolicy('confirm'), PLAIN, atRouter), { offered: true, asks: true });
    const notOffered = offerTool(callPolicy('confirm'), PLAIN, { canAsk: false, asksForUnmarked: true });
    assert.ok(!notOffered.offered && /^not marked read-only/.test(notOffered.reason));
  });

  it('speaks in the CLI\'s terms when the CLI asks', () => {
    const verdict = decideCall(callPolicy('confirm', [], CLI_ALLOW_HINTS), DELETE, { canAsk: false });
    assert.ok(verdict.verdict === 'refuse');
    assert.match(verdict.message, /--destructive-tools always/);
    assert.match(verdict.message, /--allow-destructive memory_delete_entities/);
  });

  it('reads the setting, the old boolean included, and nothing else', () => {
    assert.equal(destructivePolicyFrom(true), 'always');
    assert.equal(destructivePolicyFrom(false), 'never');
    for (const p of POLICIES) assert.equal(destructivePolicyFrom(p), p);
    for (const bad of ['yes', 1, null, undefined, {}]) assert.equal(destructivePolicyFrom(bad), undefined);
  });
});
