/**
 * What a step asks to do, and what a tool does, as one of a few operations: send, delete, update,
 * create, list, get. A step of a task often names only the operation on a thing an earlier step named
 * ("move those to phone screen", "tell the team in chatwork how it went"), so inside the servers the step
 * is already about, the tool doing that operation is lifted (catalogueScorer.ts). The step's operation is
 * read from its leading verb, the tool's from the words of its name. English only; no match, no lift.
 * Pure: no I/O, no vscode.
 */
import { identifierWords } from '../embedding/textPreprocess';

export type Operation = 'send' | 'delete' | 'update' | 'create' | 'list' | 'get';

/** Words of a tool's name that say its operation, the first operation that matches winning. */
const TOOL_WORDS: ReadonlyArray<readonly [Operation, ReadonlySet<string>]> = [
  ['send', new Set(['send', 'post', 'reply', 'notify', 'invite', 'share', 'message', 'messages'])],
  ['delete', new Set(['delete', 'remove', 'archive', 'cancel', 'reject'])],
  ['update', new Set(['update', 'patch', 'set', 'edit', 'modify', 'move', 'change', 'mark', 'rename', 'assign', 'accept'])],
  ['create', new Set(['create', 'add', 'new', 'insert', 'make', 'upload', 'register'])],
  ['list', new Set(['list', 'all', 'search', 'find', 'query', 'browse'])],
  ['get', new Set(['get', 'one', 'read', 'show', 'fetch', 'retrieve', 'describe', 'view'])],
];

/** A step's leading verb (after "please", "and", "then"), by operation. */
const STEP_VERBS: ReadonlyArray<readonly [Operation, string]> = [
  ['send', 'send|post|tell|share|notify|message|email|ping|reply|invite|drop|give [\\w ]{1,20}heads.?up|let [\\w ]{1,20}know'],
  ['delete', 'delete|remove|cancel|archive|reject|clear'],
  ['update', 'update|move|mark|change|set|edit|rename|assign|accept|reschedule'],
  ['create', 'create|add|make|set up|schedule|book|register|draft'],
  ['list', 'list|pull|find|search|collect|gather|go through'],
  ['get', 'get|read|check|look up|show|open|fetch|see'],
];
const STEP_PATTERNS = STEP_VERBS.map(([op, verbs]) => [op, new RegExp(`^\\W*(?:please\\s+)?(?:(?:and|then)\\s+)?(?:${verbs})\\b`, 'i')] as const);

/** The operation a tool's name says (`applicationsUpdate` → update, `post_room_message` → send), if any. */
export function toolOperation(name: string): Operation | undefined {
  const words = identifierWords(name);
  for (const [op, set] of TOOL_WORDS) if (words.some((w) => set.has(w))) return op;
  return undefined;
}

/** The operation a step's leading verb asks for ("move those to phone screen" → update), if any. */
export function stepOperation(step: string): Operation | undefined {
  for (const [op, pattern] of STEP_PATTERNS) if (pattern.test(step.trim())) return op;
  return undefined;
}
