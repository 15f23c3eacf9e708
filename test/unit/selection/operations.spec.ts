import assert from 'node:assert/strict';
import { stepOperation, toolOperation } from '../../../src/core/selection/operations';
import type { LexicalScorer } from '../../../src/core/selection/catalogueScorer';
import type { SelectableTool } from '../../../src/core/selection/selectionTypes';
import { DEFAULT_SELECTION_OPTIONS, ToolSelector } from '../../../src/core/selection/toolSelector';

describe('operations of steps and tools', () => {
  it('reads a tool’s operation from the words of its name, in any naming style', () => {
    assert.equal(toolOperation('applicationsUpdate'), 'update');
    assert.equal(toolOperation('post_room_message'), 'send');
    assert.equal(toolOperation('list_rooms'), 'list');
    assert.equal(toolOperation('applicantsAll'), 'list');
    assert.equal(toolOperation('getApplicantById'), 'get');
    assert.equal(toolOperation('delete-basket'), 'delete');
    assert.equal(toolOperation('forms.create'), 'create');
    assert.equal(toolOperation('mobileFriendlyTest_run'), undefined);
  });

  it('reads a step’s operation from its leading verb only', () => {
    assert.equal(stepOperation('move those to phone screen'), 'update');
    assert.equal(stepOperation('and tell the web team in chatwork how it went'), 'send');
    assert.equal(stepOperation('give the team a heads up in the hiring room'), 'send');
    assert.equal(stepOperation('then delete the old basket'), 'delete');
    assert.equal(stepOperation('please pull the applications for that job'), 'list');
    assert.equal(stepOperation('check which applicants are local'), 'get');
    assert.equal(stepOperation('the shortlist goes to the hiring room'), undefined, 'no leading verb');
    assert.equal(stepOperation('reset the move counter'), undefined, 'a verb later in the step is not read');
  });
});

describe('a step’s verb in selection', () => {
  // A FAKE lexical scorer: the step "move her application to offer" matches the applications tools alike,
  // the lister a little more; the whole prompt matches other tools.
  const names = ['ats_applicationsAll', 'ats_applicationsUpdate', 'ats_applicantsAll', 'misc_a', 'misc_b', 'misc_c'];
  const tools: SelectableTool[] = names.map((name) => ({ name, server: name.split('_')[0]!, description: name }));
  const rows: Record<string, number[]> = { 'find the applicant nadia': [0.2, 0, 1, 0, 0, 0], 'move her application to offer': [1, 0.8, 0.3, 0, 0, 0] };
  const lexical = (): LexicalScorer => ({ score: (text: string) => rows[text] ?? [0, 0, 0, 1, 0.9, 0.8] });
  const stepTools = async (stepOperationLift: number): Promise<string[]> => {
    const s = new ToolSelector({ ...DEFAULT_SELECTION_OPTIONS, serverBoost: 0, clauseWeight: 0, clauseHead: 0, companionHead: 0, stepServerLift: 0, stepContext: 0, lexicalWeight: 1, lexicalZThreshold: 0, minTools: 1, depth: 0, stepHead: 1, stepShare: 0, stepOperationLift }, { createLexical: lexical });
    s.setCatalogue(tools);
    const selection = await s.select({ prompt: 'find the applicant nadia, and move her application to offer' });
    return selection.tools.filter((t) => t.stages.includes('step')).map((t) => t.name);
  };

  it('sends the tool that does what the step’s verb asks, within the server the step is about', async () => {
    assert.ok(!(await stepTools(0)).includes('ats_applicationsUpdate'), 'without the lift the lister is the step’s best');
    assert.ok((await stepTools(2)).includes('ats_applicationsUpdate'), JSON.stringify(await stepTools(2)));
  });
});
