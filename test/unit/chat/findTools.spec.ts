import assert from 'node:assert/strict';
import { FIND_TOOLS_NAME, runChatTurn, type ChatToolDefinition, type TurnSearch } from '../../../src/core/chat/chatTurn';
import { OfferedTools } from '../../../src/core/chat/offeredTools';
import { searchHits } from '../../../src/core/search/toolSearch';
import { chatUsageRecord } from '../../../src/core/chat/turnUsage';
import { CostMonitor } from '../../../src/core/guards/costMonitor';
import { LoopDetector } from '../../../src/core/guards/loopDetector';
import { UsageMemory } from '../../../src/core/learning/usageMemory';
import type { ConfirmAnswer } from '../../../src/core/policy/confirmation';
import { LexicalRanker } from '../../../src/core/selection/lexicalRanker';
import type { Selection } from '../../../src/core/selection/selectionTypes';
import { callPolicy, type DestructivePolicy } from '../../../src/core/policy/callPolicy';
import { rankableFor } from '../../../src/core/selection/toolIndex';
import { DEFAULT_SELECTION_OPTIONS, ToolSelector } from '../../../src/core/selection/toolSelector';
import type { RoutedTool } from '../../../src/core/router/toolRouter';
import { lastToolResult, ScriptedFakeModel, TableFakeRouter } from './scriptedFakes';

/**
 * `@router` finding a tool it was not given: the real selector (lexical ranking, no embedder) picks the
 * tools for the prompt and ranks the catalogue for the model's search, exactly as the participant wires
 * them; only the model (scripted) and the servers (a table) are fakes.
 */

/** Tools are read-only unless given other hints: @router asks before every tool not marked read-only or non-destructive. */
function tool(server: string, name: string, description: string, annotations: RoutedTool['annotations'] = { readOnlyHint: true }): RoutedTool {
  return {
    name: `${server}_${name}`,
    server,
    originalName: name,
    description: `[${server}] ${description}`,
    originalDescription: description,
    inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
    annotations,
  };
}

const CATALOGUE: RoutedTool[] = [
  tool('notes', 'search_notes', 'Search the notes for a word or phrase and list the matching notes.'),
  tool('notes', 'read_note', 'Read one note by its title.'),
  tool('notes', 'list_notes', 'List the titles of all notes.'),
  tool('files', 'read_file', 'Read the whole contents of a file.'),
  tool('files', 'list_directory', 'List the files in a directory.'),
  tool('mail', 'search_messages', 'Search mail messages by sender or subject.'),
  tool('mail', 'read_message', 'Read one mail message.'),
  tool('calendar', 'create_event', 'Create a calendar event with a title, a start time and attendees.', { readOnlyHint: false, destructiveHint: false }),
  tool('calendar', 'delete_event', 'Delete a calendar event.', { destructiveHint: true }),
];
const byName = new Map(CATALOGUE.map((t) => [t.name, t]));
const getTool = (name: string): RoutedTool | undefined => byName.get(name);
const definition = (name: string): ChatToolDefinition | undefined => {
  const t = getTool(name);
  return t ? { name: t.name, description: t.description, inputSchema: t.inputSchema, annotations: t.annotations } : undefined;
};

const PROMPT = "Look up what Ana's notes say about the team lunch, and book it for all of us";

function realSelector(cap: number, policy: DestructivePolicy = 'confirm'): ToolSelector {
  const selector = new ToolSelector({ ...DEFAULT_SELECTION_OPTIONS, minTools: 2, cap, callPolicy: callPolicy(policy) }, { createLexical: (tools) => new LexicalRanker(tools.map(rankableFor)) });
  selector.setCatalogue(CATALOGUE);
  return selector;
}

/** The participant's search (chatParticipant.ts turnSearch), over the real selector. */
function search(selector: ToolSelector, policy: DestructivePolicy = 'confirm'): TurnSearch {
  return {
    search: async (query) => searchHits(await selector.select({ prompt: query }), getTool, { limit: 5, policy: callPolicy(policy) }),
    definition,
  };
}

async function turnWith(selection: Selection, model: ScriptedFakeModel, router: TableFakeRouter, turnSearch: TurnSearch, extra: { cap?: number; policy?: DestructivePolicy; confirm?: () => Promise<ConfirmAnswer> } = {}) {
  return runChatTurn({
    prompt: PROMPT,
    history: [],
    selection,
    tools: selection.tools.flatMap((t) => definition(t.name) ?? []),
    model,
    router,
    loops: new LoopDetector(),
    cost: new CostMonitor({}),
    turn: 1,
    search: turnSearch,
    ...(extra.cap !== undefined ? { cap: extra.cap } : {}),
    ...(extra.policy ? { policy: callPolicy(extra.policy) } : {}),
    ...(extra.confirm ? { confirm: extra.confirm } : {}),
  });
}

describe('@router finds tools during a turn', () => {
  it('finishes a task whose tool was not selected: search → offered at the next step → called → recorded as a miss', async () => {
    const cap = 4;
    const selector = realSelector(cap);
    const selection = await selector.select({ prompt: PROMPT });
    const selected = selection.tools.map((t) => t.name);
    assert.ok(!selected.includes('calendar_create_event'), `precondition: the needed tool is not selected (${selected.join(', ')})`);
    assert.ok(selected.length <= cap);

    const model = new ScriptedFakeModel([
      { text: '', toolCalls: [{ callId: 'c1', name: 'notes_search_notes', input: { text: 'team lunch' } }] },
      { text: '', toolCalls: [{ callId: 'c2', name: FIND_TOOLS_NAME, input: { query: 'create a calendar event' } }] },
      (messages) => {
        const found = JSON.parse(lastToolResult(messages)) as { tools: Array<{ name: string; status: string }> };
        assert.equal(found.tools[0]!.name, 'calendar_create_event', 'the search ranks the needed tool first');
        assert.equal(found.tools[0]!.status, 'offered from your next step');
        return { text: '', toolCalls: [{ callId: 'c3', name: 'calendar_create_event', input: { text: 'Team lunch, Friday 12:00' } }] };
      },
      (messages) => ({ text: `Booked: ${lastToolResult(messages)}`, toolCalls: [] }),
    ]);
    const router = new TableFakeRouter((name) => (name === 'notes_search_notes' ? 'Ana: team lunch on Friday at noon' : 'event created'));
    const result = await turnWith(selection, model, router, search(selector), { cap });

    assert.equal(result.answer, 'Booked: event created');
    assert.deepEqual(router.calls.map((c) => c.name), ['notes_search_notes', 'calendar_create_event'], 'the search itself never reaches a server');
    // The search tool is offered at every step; the found tool from the step after the search on.
    for (const r of model.requests) assert.ok(r.tools.includes(FIND_TOOLS_NAME));
    assert.ok(!model.requests[0]!.tools.includes('calendar_create_event'));
    assert.ok(!model.requests[1]!.tools.includes('calendar_create_event'));
    assert.ok(model.requests[2]!.tools.includes('calendar_create_event'), 'offered at the step after the search');
    assert.ok(model.requests[3]!.tools.includes('calendar_create_event'), 'and it stays');
    for (const r of model.requests) assert.ok(r.tools.length - 1 <= cap, `within the cap: ${r.tools.join(', ')}`);
    assert.ok(result.found.some((f) => f.name === 'calendar_create_event' && f.query === 'create a calendar event' && f.step === 2 && f.offered));
    assert.ok(!result.found.some((f) => selected.includes(f.name)), 'tools already offered are not "found"');
    assert.deepEqual(result.warnings, []);

    // Learning from use: the found-and-called tool is a miss of this prompt, the search tool is not recorded,
    // and the next similar prompt gets a hint for it.
    const memory = new UsageMemory({});
    memory.record(chatUsageRecord(PROMPT, selected, result.calls.map((c) => c.call.name), (name) => byName.has(name)));
    const [record] = memory.records();
    assert.deepEqual([...record!.misses], ['calendar_create_event']);
    assert.deepEqual([...record!.called], ['notes_search_notes', 'calendar_create_event']);
    assert.deepEqual([...record!.offered], selected);
    assert.ok((memory.hintsFor("Look up what Ana's notes say about the team dinner and book it", undefined).get('calendar_create_event') ?? 0) > 0);
  });

  it('keeps the offered set within the cap: a found tool takes the place of the weakest selected tool not called', async () => {
    const selection = {
      tools: [
        { name: 'notes_read_note', stages: ['required'], tier: 1, reason: 'pinned' },
        { name: 'notes_search_notes', stages: ['embedding'], tier: 2, reason: 'rank 1' },
        { name: 'mail_read_message', stages: ['embedding'], tier: 2, reason: 'rank 2' },
      ],
    } as unknown as Selection;
    const offered = new OfferedTools(selection.tools.flatMap((t) => definition(t.name) ?? []), selection, 3);
    offered.markCalled('mail_read_message');
    assert.deepEqual(offered.add(definition('calendar_create_event')!), { offered: true, replaced: 'notes_search_notes' });
    assert.deepEqual(offered.definitions.map((d) => d.name), ['notes_read_note', 'mail_read_message', 'calendar_create_event']);
    // Pinned, called and found tools keep their places: nothing is left to give.
    assert.deepEqual(offered.add(definition('files_read_file')!), { offered: false });
    assert.equal(offered.definitions.length, 3);
  });

  it('tells the model when the cap leaves no room, and does not offer the tool', async () => {
    const selection = { tools: [{ name: 'notes_read_note', stages: ['core'], tier: 1, reason: 'core' }] } as unknown as Selection;
    const model = new ScriptedFakeModel([
      { text: '', toolCalls: [{ callId: 'c1', name: FIND_TOOLS_NAME, input: { query: 'create a calendar event' } }] },
      (messages) => ({ text: lastToolResult(messages), toolCalls: [] }),
    ]);
    const result = await turnWith(selection, model, new TableFakeRouter(() => 'ok'), search(realSelector(25)), { cap: 1 });
    assert.match(result.answer, /not offered: the tool limit is reached/);
    assert.deepEqual(model.requests[1]!.tools, ['notes_read_note', FIND_TOOLS_NAME]);
    assert.ok(result.found.every((f) => !f.offered));
  });

  it('asks before a destructive tool it found runs (policy confirm), and never finds one under "never"', async () => {
    const query = { text: '', toolCalls: [{ callId: 'c1', name: FIND_TOOLS_NAME, input: { query: 'delete a calendar event' } }] };
    const selection = await realSelector(25).select({ prompt: 'what is in my notes' });
    const asked: string[] = [];
    const model = new ScriptedFakeModel([query, { text: '', toolCalls: [{ callId: 'c2', name: 'calendar_delete_event', input: { text: 'lunch' } }] }, { text: 'done', toolCalls: [] }]);
    const router = new TableFakeRouter(() => 'deleted');
    const result = await turnWith(selection, model, router, search(realSelector(25)), {
      confirm: async () => {
        asked.push('calendar_delete_event');
        return { answer: 'yes' };
      },
    });
    assert.deepEqual(asked, ['calendar_delete_event'], 'the found tool is destructive by its annotations: asked first');
    assert.equal(result.calls[0]!.confirmation, 'confirmed');
    assert.deepEqual(router.calls.map((c) => c.name), ['calendar_delete_event']);

    const never = new ScriptedFakeModel([query, (messages) => ({ text: lastToolResult(messages), toolCalls: [] })]);
    const refused = await turnWith(selection, never, new TableFakeRouter(() => 'x'), search(realSelector(25, 'never'), 'never'), { policy: 'never' });
    assert.ok(!refused.found.some((f) => f.name === 'calendar_delete_event'));
    assert.ok(!never.requests[1]!.tools.includes('calendar_delete_event'));
    assert.doesNotMatch(refused.answer, /calendar_delete_event/);
  });

  it('answers a search without a query with what to do, and offers nothing', async () => {
    const selection = { tools: [] } as unknown as Selection;
    const model = new ScriptedFakeModel([{ text: '', toolCalls: [{ callId: 'c1', name: FIND_TOOLS_NAME, input: { query: ' ' } }] }, (messages) => ({ text: lastToolResult(messages), toolCalls: [] })]);
    const result = await turnWith(selection, model, new TableFakeRouter(() => 'x'), search(realSelector(25)));
    assert.match(result.answer, /needs a non-empty "query"/);
    assert.deepEqual(result.found, []);
    assert.deepEqual(result.calls, []);
  });
});
