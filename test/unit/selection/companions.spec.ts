import assert from 'node:assert/strict';
import { COMPANION_MAX_SERVER_TOOLS, CompanionIndex, givesIdFor } from '../../../src/core/selection/companions';
import { LexicalRanker } from '../../../src/core/selection/lexicalRanker';
import type { SelectableTool } from '../../../src/core/selection/selectionTypes';
import { rankableFor } from '../../../src/core/selection/toolIndex';
import { DEFAULT_SELECTION_OPTIONS, ToolSelector } from '../../../src/core/selection/toolSelector';

/** A chat server shaped like real ones: most tools act on a room, found by list_rooms. */
const CHAT = ['list_rooms', 'create_room', 'get_room', 'list_room_messages', 'post_room_message', 'update_room_message', 'list_room_members', 'get_me', 'list_contacts'].map((n) => ({ name: `chat_${n}`, server: 'chat' }));
/** A cloud API whose every tool carries the same path prefix. */
const CLOUD = ['projects_locations_list', 'projects_locations_jobs_list', 'projects_locations_jobs_run', 'projects_locations_jobs_delete'].map((n) => ({ name: `cloud_${n}`, server: 'cloud' }));
const TOOLS = [...CHAT, ...CLOUD, { name: 'ats_applicantsAll', server: 'ats' }, { name: 'ats_applicantsUpdate', server: 'ats' }, { name: 'ats_jobsAll', server: 'ats' }];

const at = (name: string): number => TOOLS.findIndex((t) => t.name === name);
const names = (index: CompanionIndex, chosen: string[], prompt: string): string[] =>
  index.companionsFor(chosen.map(at), new Float64Array(TOOLS.length), prompt).map((c) => TOOLS[c.index]!.name);

describe('companion listers', () => {
  const index = new CompanionIndex(TOOLS);

  it('a tool acting on an item brings the lister of that item, container first', () => {
    assert.deepEqual(names(index, ['chat_post_room_message'], 'tell the marketing chat the banners are ready'), ['chat_list_rooms', 'chat_list_room_messages']);
    assert.deepEqual(names(index, ['ats_applicantsUpdate'], 'Tom Becker has a new phone number, update his record'), ['ats_applicantsAll']);
  });

  it('a lister brings only the listers of its containers, and tools with no resource bring none', () => {
    assert.deepEqual(names(index, ['chat_list_room_messages'], 'catch me up on the design room'), ['chat_list_rooms']);
    assert.deepEqual(names(index, ['chat_list_rooms'], 'which rooms am I in'), []);
    assert.deepEqual(names(index, ['chat_get_me'], 'what is my account id'), []);
  });

  it('no lister is sent for a resource whose id the prompt gives', () => {
    assert.deepEqual(names(index, ['ats_applicantsUpdate'], 'update applicant 88213, new phone number'), []);
    assert.deepEqual(names(index, ['chat_post_room_message'], 'post "done" in room #4471'), []);
  });

  it('a required parameter names a container whose lister is sent; an optional one does not', () => {
    const schema = (required: string[], optional: string[] = []): unknown => ({ type: 'object', properties: Object.fromEntries([...required, ...optional].map((p) => [p, { type: 'string' }])), required });
    const tools = [
      { name: 'tasks_tasks_insert', server: 'tasks', inputSchema: schema(['tasklist', 'title']) },
      { name: 'tasks_tasks_list', server: 'tasks', inputSchema: schema(['tasklist']) },
      { name: 'tasks_tasklists_list', server: 'tasks', inputSchema: schema([]) },
      { name: 'cal_events_insert', server: 'cal', inputSchema: schema(['calendarId', 'summary']) },
      { name: 'cal_events_quickAdd', server: 'cal', inputSchema: schema(['text'], ['calendarId']) },
      { name: 'cal_calendarList_list', server: 'cal', inputSchema: schema([]) },
      { name: 'blog_posts_insert', server: 'blog', inputSchema: schema(['blogId']) },
      { name: 'blog_blogs_listByUser', server: 'blog', inputSchema: schema(['userId']) },
    ];
    const byName = new CompanionIndex(tools);
    const of = (chosen: string, prompt: string): string[] =>
      byName.companionsFor([tools.findIndex((t) => t.name === chosen)], new Float64Array(tools.length), prompt).map((c) => tools[c.index]!.name);
    // A tool that makes an item brings the lister of its container, never of the item itself.
    assert.deepEqual(of('tasks_tasks_insert', 'add "buy milk" to my groceries list'), ['tasks_tasklists_list']);
    assert.deepEqual(of('cal_events_insert', 'put the dentist on the family calendar'), ['cal_calendarList_list']);
    assert.deepEqual(of('cal_events_quickAdd', 'dentist friday 3pm'), []);
    // "by user" filters what a lister lists: blogs.
    assert.deepEqual(of('blog_posts_insert', 'publish this on the travel blog'), ['blog_blogs_listByUser']);
    assert.deepEqual(of('cal_events_insert', 'add it to calendar 77 please'), []);
  });

  it('a word every tool of a server carries is a prefix, not a resource', () => {
    assert.deepEqual(names(index, ['cloud_projects_locations_jobs_run'], 'run the nightly export job'), ['cloud_projects_locations_jobs_list']);
  });

  it('a tool that makes a new item brings only the listers of its containers', () => {
    const tools = [...TOOLS, { name: 'chat_create_room_task', server: 'chat' }, { name: 'chat_list_room_tasks', server: 'chat' }];
    const index2 = new CompanionIndex(tools);
    const pick = (chosen: string, prompt: string): string[] =>
      index2.companionsFor([tools.findIndex((t) => t.name === chosen)], new Float64Array(tools.length), prompt).map((c) => tools[c.index]!.name);
    assert.deepEqual(pick('chat_create_room_task', 'give Ana a task in the launch room: send the deck'), ['chat_list_rooms']);
    assert.deepEqual(pick('chat_create_room', 'make a room for the offsite'), []);
  });

  it('a server bigger than one API (a bundle of many) gets no companions', () => {
    const bundle = Array.from({ length: COMPANION_MAX_SERVER_TOOLS + 1 }, (_, k) => ({ name: `hub_tool_${k}_widget`, server: 'hub' }));
    const tools = [{ name: 'hub_list_users', server: 'hub' }, { name: 'hub_update_user', server: 'hub' }, ...bundle];
    const pick = (list: typeof tools): number[] => new CompanionIndex(list).companionsFor([1], new Float64Array(list.length), 'rename Tom Becker').map((c) => c.index);
    assert.deepEqual(pick(tools.slice(0, COMPANION_MAX_SERVER_TOOLS)), [0]);
    assert.deepEqual(pick(tools), []);
  });

  it('never repeats a tool already chosen or already added', () => {
    assert.deepEqual(names(index, ['chat_post_room_message', 'chat_list_rooms', 'chat_update_room_message'], 'fix the typo in my last message in the ops room'), ['chat_list_room_messages']);
  });

  it('reads ids after the resource word', () => {
    assert.equal(givesIdFor('show me applicant 88213', 'applicant'), true);
    assert.equal(givesIdFor("applicant 88213's profile", 'applicant'), true);
    assert.equal(givesIdFor('Tom Becker changed his phone to +49 151 2233', 'applicant'), false);
    assert.equal(givesIdFor('jobs #12 and #13', 'job'), true);
  });

  it('the selector sends the companion with its reason, and ranks it beside the tool it serves', async () => {
    const tools: SelectableTool[] = [
      { name: 'ats_applicantsAll', server: 'ats', description: 'List Applicants' },
      { name: 'ats_applicantsUpdate', server: 'ats', description: 'Update Applicant phone number or email' },
      ...Array.from({ length: 30 }, (_, i) => ({ name: `misc_tool${i}`, server: 'misc', description: `unrelated helper number ${i} for phone calls` })),
    ];
    const make = (companionHead: number): ToolSelector => {
      const s = new ToolSelector({ ...DEFAULT_SELECTION_OPTIONS, companionHead, minTools: 1, depth: 0.1 }, { createLexical: (t) => new LexicalRanker(t.map(rankableFor)) });
      s.setCatalogue(tools);
      return s;
    };
    const prompt = 'Tom Becker changed his phone number, update his record';
    const off = await make(0).select({ prompt });
    assert.ok(!off.tools.some((t) => t.name === 'ats_applicantsAll'), 'without companions the lister is not sent');
    const on = await make(1).select({ prompt });
    const lister = on.tools.find((t) => t.name === 'ats_applicantsAll');
    assert.ok(lister, 'the lister is sent');
    assert.match(lister.reason, /finds the applicant that ats_applicantsUpdate acts on/);
    assert.ok(on.ranking.findIndex((r) => r.name === 'ats_applicantsAll') <= 2, 'ranked beside the tool it serves');
  });
});
