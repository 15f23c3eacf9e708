import assert from 'node:assert/strict';
import { argumentsForConfirmation, confirmationMarkdown, MAX_CONFIRMATION_ARGUMENT_CHARS, type ConfirmAnswer } from '../../../src/core/policy/confirmation';
import { callPolicy, type DestructivePolicy } from '../../../src/core/policy/callPolicy';
import { runChatTurn, type CallConfirmation, type ChatToolDefinition, type ChatTurnOptions } from '../../../src/core/chat/chatTurn';
import { CostMonitor } from '../../../src/core/guards/costMonitor';
import { LoopDetector } from '../../../src/core/guards/loopDetector';
import type { Selection } from '../../../src/core/selection/selectionTypes';
import { lastToolResult, ScriptedFakeModel, TableFakeRouter } from './scriptedFakes';

/** Destructive calls in `@router`: asked through the turn's confirm seam, answered here from a script. */

const TOOLS: ChatToolDefinition[] = [
  { name: 'files_read_file', description: 'Read a file', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
  { name: 'files_delete_file', description: 'Delete a file', inputSchema: { type: 'object', properties: { path: { type: 'string' } } }, annotations: { destructiveHint: true } },
];
/** What the router knows of every tool, offered or not (the participant's hintsOf). */
const ROUTER_HINTS = new Map(TOOLS.map((t) => [t.name, t.annotations]));
/** As the selector makes it under `confirm`: the destructive tool is offered and marked. */
const SELECTION = {
  tools: [
    { name: 'files_read_file', stages: ['embedding'], tier: 2, reason: 'rank 1' },
    { name: 'files_delete_file', stages: ['embedding'], tier: 2, reason: 'rank 2; marked destructive, asks before it runs', confirm: true },
  ],
} as unknown as Selection;
const DELETE = { text: '', toolCalls: [{ callId: 'c1', name: 'files_delete_file', input: { path: 'notes.md' } }] };

/** A scripted user: answers each question from the list, and remembers what it was asked. */
function scriptedUser(...answers: boolean[]): { asked: CallConfirmation[]; confirm: (c: CallConfirmation) => Promise<ConfirmAnswer> } {
  const asked: CallConfirmation[] = [];
  return {
    asked,
    confirm: async (c) => {
      asked.push(c);
      const answer = answers.shift();
      if (answer === undefined) throw new Error('asked more often than scripted');
      return answer ? { answer: 'yes' } : { answer: 'no' };
    },
  };
}

function turn(model: ScriptedFakeModel, router: TableFakeRouter, extra: { policy?: DestructivePolicy; allowed?: string[]; confirm?: (c: CallConfirmation) => Promise<ConfirmAnswer>; selection?: Selection; tools?: ChatToolDefinition[]; hintsOf?: ChatTurnOptions['hintsOf'] } = {}) {
  return runChatTurn({
    prompt: 'delete notes.md',
    history: [],
    selection: extra.selection ?? SELECTION,
    tools: (extra.tools ?? TOOLS).filter((t) => (extra.selection ?? SELECTION).tools.some((s) => s.name === t.name)),
    model,
    router,
    loops: new LoopDetector(),
    cost: new CostMonitor({}),
    turn: 1,
    ...(extra.policy || extra.allowed ? { policy: callPolicy(extra.policy, extra.allowed) } : {}),
    ...(extra.confirm ? { confirm: extra.confirm } : {}),
    ...(extra.hintsOf ? { hintsOf: extra.hintsOf } : {}),
  });
}

describe('@router asks before a destructive call', () => {
  it('runs the call once the user confirms, naming the tool and its arguments in the question', async () => {
    const user = scriptedUser(true);
    const router = new TableFakeRouter(() => 'deleted notes.md');
    const model = new ScriptedFakeModel([DELETE, (messages) => ({ text: lastToolResult(messages), toolCalls: [] })]);
    const result = await turn(model, router, { confirm: user.confirm });
    assert.deepEqual(user.asked, [{ tool: 'files_delete_file', args: { path: 'notes.md' }, markedDestructive: true }]);
    assert.deepEqual(router.calls, [{ name: 'files_delete_file', args: { path: 'notes.md' } }]);
    assert.equal(result.answer, 'deleted notes.md');
    assert.equal(result.calls[0]!.confirmation, 'confirmed');
  });

  it('does not run a declined call, and tells the model the user declined', async () => {
    const user = scriptedUser(false);
    const router = new TableFakeRouter(() => 'deleted');
    const model = new ScriptedFakeModel([DELETE, (messages) => ({ text: `model read: ${lastToolResult(messages)}`, toolCalls: [] })]);
    const result = await turn(model, router, { confirm: user.confirm });
    assert.equal(user.asked.length, 1);
    assert.deepEqual(router.calls, [], 'the server was never called');
    assert.match(result.answer, /^model read: CANCELLED: The user declined to run "files_delete_file" with these arguments, so it was not run\./);
    const call = result.calls[0]!;
    assert.equal(call.confirmation, 'declined');
    assert.equal(call.envelope.ok === false && call.envelope.error.type, 'CANCELLED');
  });

  it('does not run after a failed question, and says it failed rather than that the user declined', async () => {
    const router = new TableFakeRouter(() => 'deleted');
    const model = new ScriptedFakeModel([DELETE, (messages) => ({ text: lastToolResult(messages), toolCalls: [] })]);
    const result = await turn(model, router, { confirm: () => Promise.reject(new Error('dialog closed')) });
    assert.deepEqual(router.calls, []);
    assert.equal(result.calls[0]!.confirmation, 'unanswered');
    assert.match(result.answer, /could not ask the user to confirm "files_delete_file" \(dialog closed\)/);
    assert.doesNotMatch(result.answer, /declined/);
  });

  it('says a question that timed out timed out, not that the user declined', async () => {
    const router = new TableFakeRouter(() => 'deleted');
    const model = new ScriptedFakeModel([DELETE, (messages) => ({ text: lastToolResult(messages), toolCalls: [] })]);
    const result = await turn(model, router, { confirm: () => Promise.resolve({ answer: 'timed-out', waitedMs: 120_000 }) });
    assert.deepEqual(router.calls, []);
    assert.equal(result.calls[0]!.confirmation, 'unanswered');
    assert.match(result.answer, /timed out after 120 s without an answer/);
    assert.doesNotMatch(result.answer, /declined/);
  });

  it('runs an allow-listed destructive tool without asking', async () => {
    const user = scriptedUser();
    const router = new TableFakeRouter(() => 'deleted');
    const result = await turn(new ScriptedFakeModel([DELETE, { text: 'done', toolCalls: [] }]), router, { allowed: ['files_delete_file'], confirm: user.confirm });
    assert.deepEqual(user.asked, []);
    assert.deepEqual(router.calls.map((c) => c.name), ['files_delete_file']);
    assert.equal(result.calls[0]!.confirmation, undefined, 'no question was needed');
  });

  it('does not ask under "always", nor for tools that are not destructive', async () => {
    const user = scriptedUser();
    const router = new TableFakeRouter(() => 'ok');
    const model = new ScriptedFakeModel([DELETE, { text: '', toolCalls: [{ callId: 'c2', name: 'files_read_file', input: {} }] }, { text: 'done', toolCalls: [] }]);
    const result = await turn(model, router, { policy: 'always', confirm: user.confirm });
    assert.deepEqual(user.asked, []);
    assert.deepEqual(router.calls.map((c) => c.name), ['files_delete_file', 'files_read_file']);
    assert.ok(result.calls.every((c) => c.confirmation === undefined));
  });

  it('under "never", refuses a destructive tool whether or not it was offered, and says how to allow it', async () => {
    const onlyRead = { tools: [SELECTION.tools[0]] } as unknown as Selection;
    const router = new TableFakeRouter(() => 'ok');
    const model = new ScriptedFakeModel([DELETE, (messages) => ({ text: lastToolResult(messages), toolCalls: [] })]);
    const result = await turn(model, router, { policy: 'never', selection: onlyRead, hintsOf: (name) => ROUTER_HINTS.get(name) });
    assert.equal(router.calls.length, 0, 'the server was never called');
    assert.match(result.answer, /policy is "never"/);
    assert.match(result.answer, /toolRouter\.selection\.allowedDestructiveTools/);
    assert.equal(result.calls[0]!.confirmation, 'refused');

    const pinned = { tools: [SELECTION.tools[0], { name: 'files_delete_file', stages: ['required'], tier: 1, reason: 'pinned' }] } as unknown as Selection;
    const again = new ScriptedFakeModel([DELETE, { text: 'done', toolCalls: [] }]);
    const second = await turn(again, router, { policy: 'never', selection: pinned, hintsOf: (name) => ROUTER_HINTS.get(name) });
    assert.deepEqual(router.calls, [], '"never" holds for a pinned tool too');
    assert.equal(second.calls[0]!.confirmation, 'refused');
  });

  it('asks about an unoffered destructive call too, and refuses when nobody can be asked', async () => {
    const onlyRead = { tools: [SELECTION.tools[0]] } as unknown as Selection;
    const user = scriptedUser(false);
    const router = new TableFakeRouter(() => 'ok');
    await turn(new ScriptedFakeModel([DELETE, { text: 'ok', toolCalls: [] }]), router, { selection: onlyRead, hintsOf: (name) => ROUTER_HINTS.get(name), confirm: user.confirm });
    assert.equal(user.asked.length, 1);
    const result = await turn(new ScriptedFakeModel([DELETE, { text: 'ok', toolCalls: [] }]), router);
    assert.equal(result.calls[0]!.confirmation, 'refused');
    assert.deepEqual(router.calls, []);
  });

  it('survives a model call with absurdly deep arguments: the turn goes on and the router decides', async () => {
    let deep: unknown = {};
    for (let i = 0; i < 100_000; i++) deep = { a: deep };
    const router = new TableFakeRouter(() => 'read');
    const model = new ScriptedFakeModel([{ text: '', toolCalls: [{ callId: 'c1', name: 'files_read_file', input: deep }] }, { text: 'done', toolCalls: [] }]);
    const result = await turn(model, router);
    assert.equal(result.answer, 'done');
    assert.equal(router.calls.length, 1, 'the call reached the router, which refuses such arguments itself');
  });

  it('checks the loop guard before asking: a refused loop is never put to the user', async () => {
    const user = scriptedUser(true, true, true);
    const router = new TableFakeRouter(() => 'same');
    const model = new ScriptedFakeModel([DELETE, DELETE, DELETE, DELETE, { text: 'stop', toolCalls: [] }]);
    const result = await turn(model, router, { confirm: user.confirm });
    assert.equal(user.asked.length, 3);
    assert.equal(result.warnings.filter((w) => w.kind === 'loop').length, 1);
  });
});

/** A server that marks nothing, as many do: the MCP spec reads its tools as ones that may destroy. */
const UNMARKED: ChatToolDefinition[] = [
  { name: 'shell_start_process', description: 'Start a shell command', inputSchema: { type: 'object', properties: { command: { type: 'string' } } } },
  { name: 'notes_add_note', description: 'Add a note', inputSchema: { type: 'object' }, annotations: { readOnlyHint: false, destructiveHint: false } },
  { name: 'notes_list_notes', description: 'List notes', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
];
const UNMARKED_SELECTION = { tools: UNMARKED.map((t) => ({ name: t.name, stages: ['embedding'], tier: 2, reason: 'rank' })) } as unknown as Selection;
const START = { text: '', toolCalls: [{ callId: 'c1', name: 'shell_start_process', input: { command: 'rm -rf build' } }] };
const ADD_AND_LIST = { text: '', toolCalls: [{ callId: 'c2', name: 'notes_add_note', input: {} }, { callId: 'c3', name: 'notes_list_notes', input: {} }] };

describe('@router asks before a tool its server does not mark read-only or non-destructive', () => {
  it('asks before an unannotated tool, saying it is not marked destructive, and runs it on a yes', async () => {
    const user = scriptedUser(true);
    const router = new TableFakeRouter(() => 'started');
    const result = await turn(new ScriptedFakeModel([START, { text: 'done', toolCalls: [] }]), router, { selection: UNMARKED_SELECTION, tools: UNMARKED, confirm: user.confirm });
    assert.deepEqual(user.asked, [{ tool: 'shell_start_process', args: { command: 'rm -rf build' }, markedDestructive: false }]);
    assert.deepEqual(router.calls.map((c) => c.name), ['shell_start_process']);
    assert.equal(result.calls[0]!.confirmation, 'confirmed');
  });

  it('runs read-only and non-destructive tools without asking', async () => {
    const user = scriptedUser();
    const router = new TableFakeRouter(() => 'ok');
    const result = await turn(new ScriptedFakeModel([ADD_AND_LIST, { text: 'done', toolCalls: [] }]), router, { selection: UNMARKED_SELECTION, tools: UNMARKED, confirm: user.confirm });
    assert.deepEqual(user.asked, []);
    assert.deepEqual(router.calls.map((c) => c.name), ['notes_add_note', 'notes_list_notes']);
    assert.ok(result.calls.every((c) => c.confirmation === undefined));
  });

  it('without anyone to ask, does not run it, and says why and how to allow it', async () => {
    const router = new TableFakeRouter(() => 'started');
    const result = await turn(new ScriptedFakeModel([START, (messages) => ({ text: lastToolResult(messages), toolCalls: [] })]), router, { selection: UNMARKED_SELECTION, tools: UNMARKED });
    assert.deepEqual(router.calls, []);
    assert.equal(result.calls[0]!.confirmation, 'refused');
    assert.match(result.answer, /"shell_start_process" is not marked read-only or non-destructive by its server/);
    assert.match(result.answer, /add "shell_start_process" to toolRouter\.selection\.allowedDestructiveTools/);
  });

  it('under "never" still asks (never hides only tools marked destructive); under "always" or allow-listed, runs it', async () => {
    const user = scriptedUser(false);
    const router = new TableFakeRouter(() => 'started');
    await turn(new ScriptedFakeModel([START, { text: 'ok', toolCalls: [] }]), router, { policy: 'never', selection: UNMARKED_SELECTION, tools: UNMARKED, confirm: user.confirm });
    assert.equal(user.asked.length, 1);
    assert.deepEqual(router.calls, [], 'declined');
    for (const extra of [{ policy: 'always' as const }, { allowed: ['shell_start_process'] }]) {
      const quiet = scriptedUser();
      await turn(new ScriptedFakeModel([START, { text: 'ok', toolCalls: [] }]), router, { ...extra, selection: UNMARKED_SELECTION, tools: UNMARKED, confirm: quiet.confirm });
      assert.deepEqual(quiet.asked, []);
    }
    assert.equal(router.calls.length, 2);
  });

  it('asks about a tool whose hints nobody knows, and reads an unoffered tool\'s hints from the router', async () => {
    const user = scriptedUser(false);
    const router = new TableFakeRouter(() => 'ok');
    const onlyList = { tools: [UNMARKED_SELECTION.tools[2]] } as unknown as Selection;
    const unknown = { text: '', toolCalls: [{ callId: 'c9', name: 'made_up_tool', input: {} }] };
    await turn(new ScriptedFakeModel([unknown, { text: 'ok', toolCalls: [] }]), router, { selection: onlyList, tools: UNMARKED, confirm: user.confirm });
    assert.deepEqual(user.asked.map((a) => a.tool), ['made_up_tool']);
    const hints = new Map(UNMARKED.map((t) => [t.name, t.annotations ?? {}]));
    const quiet = scriptedUser();
    await turn(new ScriptedFakeModel([ADD_AND_LIST, { text: 'ok', toolCalls: [] }]), router, { selection: onlyList, tools: UNMARKED, confirm: quiet.confirm, hintsOf: (name) => hints.get(name) });
    assert.deepEqual(quiet.asked, [], 'notes_add_note was not offered, but the router says it is non-destructive');
  });
});

describe('confirmation text', () => {
  it('shows the tool, its server and its arguments, with the server text fenced so it cannot render', () => {
    const text = confirmationMarkdown({ name: 'files_delete_file', server: 'files', description: 'Deletes. ```\n[click](https://evil.example) <img src=x>' }, { path: 'a.md' }, true);
    assert.match(text, /^`files_delete_file` \(server `files`\) is marked destructive/);
    assert.match(text, /````\nDeletes\. ```\n\[click\]\(https:\/\/evil\.example\) <img src=x>\n````/);
    assert.match(text, /```\n\{\n {2}"path": "a\.md"\n\}\n```/);
  });

  it('indents JSON-text arguments and cuts long ones', () => {
    assert.equal(argumentsForConfirmation('{"a":1}'), '{\n  "a": 1\n}');
    const long = argumentsForConfirmation({ text: 'x'.repeat(5000) });
    assert.equal(long.length, MAX_CONFIRMATION_ARGUMENT_CHARS);
    assert.ok(long.endsWith('…'));
  });
});
