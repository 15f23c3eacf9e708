import assert from 'node:assert/strict';
import { MAX_STEPS, refersBack, splitSteps, stepPicks, type StepRanking } from '../../../src/core/selection/steps';
import { DEFAULT_SELECTION_OPTIONS, ToolSelector, type LexicalScorer, type SelectionOptions } from '../../../src/core/selection/toolSelector';
import type { SelectableTool } from '../../../src/core/selection/selectionTypes';

describe('steps of a task', () => {
  it('splits at a comma or an "and" that starts a new action', () => {
    assert.deepEqual(splitSteps("pull last month's failed builds, work out which commit broke the most, open an issue for it and ping the owner in chat"), [
      "pull last month's failed builds",
      'work out which commit broke the most',
      'open an issue for it',
      'ping the owner in chat',
    ]);
    assert.deepEqual(splitSteps('save it in a keep note and share it with hr@example.org'), ['save it in a keep note', 'share it with hr@example.org']);
    assert.deepEqual(splitSteps('the event is on the first monday - check if it is a holiday, then update the form'), ['the event is on the first monday check if it is a holiday', 'update the form']);
  });

  it('keeps one action on several things as one step', () => {
    for (const prompt of ['what is the weather in Paris and Rome', 'buy salt and pepper', 'compare the prices of apples, pears and plums', 'find flights to Oslo and Bergen, cheapest first']) {
      assert.deepEqual(splitSteps(prompt), [prompt]);
    }
  });

  it('reads context without an action of its own with the step after it', () => {
    assert.deepEqual(splitSteps('GDPR request: delete everything we have on candidate Lena Fischer'), ['GDPR request: delete everything we have on candidate Lena Fischer']);
    assert.deepEqual(splitSteps('chatwork cleanup: list my open tasks, mark them done, and leave that room'), ['chatwork cleanup list my open tasks', 'mark them done', 'leave that room']);
    assert.deepEqual(splitSteps('Hi, I am planning the team dinner. Could you find a free evening and book a table?'), ['Hi, I am planning the team dinner Could you find a free evening', 'book a table?']);
  });

  it('glues a fragment too short to be a step to the step before it', () => {
    assert.deepEqual(splitSteps('find the report, post it in the team room and save'), ['find the report', 'post it in the team room save']);
    assert.deepEqual(splitSteps('post the summary in the team room and save'), ['post the summary in the team room and save']);
  });

  it('tells a step that refers back to what an earlier step named', () => {
    for (const step of ['share it with hr@example.org', 'say hello there', 'move those to phone screen', 'drop both into the room']) assert.ok(refersBack(step), step);
    for (const step of ['create a fresh basket', 'post the summary in the team room']) assert.ok(!refersBack(step), step);
  });

  it('reads a long list of actions as a paste, not a task', () => {
    const paste = Array.from({ length: MAX_STEPS + 1 }, (_, i) => `send report ${i}`).join(', ');
    assert.deepEqual(splitSteps(paste), [paste]);
  });
});

describe('step picks', () => {
  const steps: StepRanking[] = [
    { step: 'a', ranked: [10, 11, 12, 13], companions: [] },
    { step: 'b', ranked: [20, 21, 22, 23], companions: [29] },
    { step: 'c', ranked: [10, 31, 32, 33], companions: [] },
  ];

  it('takes each step’s best tools in turns, then their listers, and skips what is already sent', () => {
    const picks = stepPicks(steps, (i) => i === 20, 0, 2, 0, 25);
    assert.deepEqual(picks.map((p) => p.index), [10, 11, 21, 31, 29]);
    assert.deepEqual(picks.find((p) => p.index === 29), { index: 29, step: 'b', rank: 0, companion: true });
  });

  it('goes on in turns until the task has its share per step, never past the cap', () => {
    assert.equal(stepPicks(steps, () => false, 3, 1, 3, 25).length, 6, '3 steps × 3 = 9 tools in all');
    assert.equal(stepPicks(steps, () => false, 3, 1, 3, 7).length, 4, 'the cap of 7 holds');
    assert.deepEqual(stepPicks([], () => false, 0, 2, 6, 25), []);
  });
});

describe('step shares in selection', () => {
  const names = ['ci_failed_builds', 'tracker_open_issue', 'chat_ping_user', 'misc_a', 'misc_b', 'misc_c', 'misc_d'];
  const tools: SelectableTool[] = names.map((name) => ({ name, server: name.split('_')[0]!, description: name }));
  const steps: Record<string, number> = { "pull last month's failed builds": 0, 'open an issue for the worst one': 1, 'ping the owner in chat': 2 };
  // A FAKE lexical scorer: the whole prompt matches the generic tools best; each step matches its own tool.
  const lexical = (): LexicalScorer => ({
    score: (text: string) => names.map((_, i) => (steps[text] !== undefined ? (i === steps[text] ? 1 : 0) : [0.3, 0.2, 0.1, 1, 0.9, 0.8, 0.7][i]!)),
  });
  const select = async (prompt: string, options: Partial<SelectionOptions>): Promise<string[]> => {
    const s = new ToolSelector({ ...DEFAULT_SELECTION_OPTIONS, serverBoost: 0, clauseWeight: 0, clauseHead: 0, companionHead: 0, stepServerLift: 0, stepContext: 0, lexicalWeight: 1, lexicalZThreshold: 0, minTools: 1, depth: 0, ...options }, { createLexical: lexical });
    s.setCatalogue(tools);
    return (await s.select({ prompt })).tools.map((t) => t.name).sort();
  };

  it('sends each step’s best tool for a task of three steps', async () => {
    const prompt = "pull last month's failed builds, open an issue for the worst one and ping the owner in chat";
    assert.deepEqual(await select(prompt, { stepHead: 0 }), ['misc_a']);
    assert.deepEqual(await select(prompt, { stepHead: 1, stepShare: 0 }), ['chat_ping_user', 'ci_failed_builds', 'misc_a', 'tracker_open_issue']);
    assert.equal((await select(prompt, { stepHead: 1, stepShare: 2 })).length, 6, 'the count grows with the steps: 2 per step');
  });

  it('lifts, inside a step, the tools of the server the step names, unless its name is only a word there', async () => {
    // A FAKE lexical scorer: the step "say hello in the room" matches the video room tool better than the chat one.
    const roomNames = ['tasks_find_applicants', 'video_room_rule', 'chatwork_post_message', 'misc_a', 'misc_b', 'everything_echo'];
    const roomTools: SelectableTool[] = roomNames.map((name) => ({ name, server: name.split('_')[0]!, description: name }));
    const rows: Record<string, number[]> = { 'find the applicants': [1, 0, 0, 0, 0, 0], 'say hello in the room': [0, 1, 0.8, 0, 0, 0] };
    const roomLexical = (): LexicalScorer => ({ score: (text: string) => rows[text] ?? [0, 0, 0, 1, 0.9, 0] });
    const pick = async (prompt: string, stepServerLift: number): Promise<string[]> => {
      const s = new ToolSelector({ ...DEFAULT_SELECTION_OPTIONS, serverBoost: 0, clauseWeight: 0, clauseHead: 0, companionHead: 0, lexicalWeight: 1, lexicalZThreshold: 0, minTools: 1, depth: 0, stepHead: 1, stepShare: 0, stepContext: 0, stepServerLift }, { createLexical: roomLexical });
      s.setCatalogue(roomTools);
      return (await s.select({ prompt })).tools.map((t) => t.name).sort();
    };
    const prompt = 'find the applicants, and say hello in the room';
    assert.ok((await pick(prompt, 0)).includes('video_room_rule'));
    assert.ok(!(await pick(prompt, 0)).includes('chatwork_post_message'));
    rows['say hello in the chatwork room'] = [0, 1, 0.8, 0, 0, 0];
    assert.ok(!(await pick('find the applicants, and say hello in the chatwork room', 0)).includes('chatwork_post_message'), 'not without the lift');
    assert.ok((await pick('find the applicants, and say hello in the chatwork room', 6)).includes('chatwork_post_message'), 'the step names chatwork');
    // Named by the other step, where chatwork's tools do not match: lifted in neither step.
    rows['find the chatwork applicants'] = [1, 0, 0, 0, 0, 0];
    assert.ok(!(await pick('find the chatwork applicants, and say hello in the room', 6)).includes('chatwork_post_message'), 'a step lifts only a server it names and matches');
    // "everything" is a word of this step, and the everything server's tool scores far below its best: not lifted.
    rows['find the applicants'] = [1, 0, 0, 0, 0, 0.1];
    rows['say hello to everything in the room'] = [0, 1, 0.8, 0, 0, 0.1];
    assert.ok(!(await pick('find the applicants, and say hello to everything in the room', 6)).includes('everything_echo'), 'a weak named server is left alone');
    rows['say hello to everything in the room'] = [0, 1, 0.8, 0, 0, 0.9];
    assert.ok((await pick('find the applicants, and say hello to everything in the room', 6)).includes('everything_echo'), 'a named server that matches the step is lifted');
  });

  it('leaves a one-step prompt’s tools as they were', async () => {
    for (const options of [{}, { depth: DEFAULT_SELECTION_OPTIONS.depth, minTools: DEFAULT_SELECTION_OPTIONS.minTools }]) {
      const prompt = 'what failed in the builds and the tests last night';
      assert.deepEqual(await select(prompt, { ...options, stepHead: 2, stepShare: 6 }), await select(prompt, { ...options, stepHead: 0 }));
    }
  });
});
