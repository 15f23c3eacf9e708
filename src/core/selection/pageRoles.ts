/**
 * The hands a browsing task needs besides the page opener: reading the page, clicking, typing, and, on a
 * server whose sessions are started by hand, starting the browser. Opening a page alone does not find a
 * hotel or log in, so when a browser need sends a server's opener, the server's best tool of each role
 * goes with it (toolSelector.ts). Roles are read from the words of a tool's name, so they hold for any
 * browser server (`browser_click`, `interact`, `fill_form`, `send_keys`, `take_snapshot`,
 * `get_element_text`, `start_browser`). Pure: no I/O, no vscode.
 */
import { identifierWords } from '../embedding/textPreprocess';

export type PageRole = 'start' | 'read' | 'click' | 'type';

export const PAGE_ROLES: readonly PageRole[] = ['start', 'read', 'click', 'type'];

/** A role as a reason's first words. */
export const PAGE_ROLE_LABELS: Readonly<Record<PageRole, string>> = {
  start: 'starts the browser',
  read: 'reads the page',
  click: 'clicks on the page',
  type: 'types into the page',
};

const ROLE_WORDS: ReadonlyArray<readonly [PageRole, ReadonlySet<string>]> = [
  ['click', new Set(['click', 'interact', 'tap'])],
  ['type', new Set(['type', 'fill', 'keys', 'input'])],
  // After typing: `type_text` types.
  ['read', new Set(['snapshot', 'text', 'content', 'markdown', 'html'])],
];
const START_VERBS: ReadonlySet<string> = new Set(['start', 'launch']);
// Not "session": `start_codegen_session` records a script, it does not start the browser.
const START_OBJECTS: ReadonlySet<string> = new Set(['browser', 'driver']);

/**
 * The role a tool's name says (`take_snapshot` → read, `send_keys` → type), if any. A starter names both
 * the act and the browser (`start_browser`, `launch_driver`); a tool that opens an address is an opener,
 * not a starter, and is not asked here.
 */
export function pageRole(name: string): PageRole | undefined {
  const words = identifierWords(name);
  if (words.some((w) => START_VERBS.has(w)) && words.some((w) => START_OBJECTS.has(w))) return 'start';
  for (const [role, set] of ROLE_WORDS) if (words.some((w) => set.has(w))) return role;
  return undefined;
}
