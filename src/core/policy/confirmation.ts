import type { DestructivePolicy } from '../selection/selectionTypes';

/**
 * Whether a call to a destructive tool runs, asks the user first, or is refused, by the policy of
 * toolRouter.selection.allowDestructiveTools. One rule for `@router` (chatTurn.ts) and agent mode
 * (agentTools.ts), so the two never disagree.
 */

export type DestructiveApproval = 'run' | 'ask' | 'refuse';

/**
 * @param destructive the tool is marked `destructiveHint`
 * @param offered `@router` only: the tool was offered this turn. Under `never`, an offered destructive
 *   tool is one the user pinned with `#`, which selection keeps on purpose; it runs.
 */
export function destructiveApproval(policy: DestructivePolicy, destructive: boolean, offered = false): DestructiveApproval {
  if (!destructive || policy === 'always') return 'run';
  if (policy === 'confirm') return 'ask';
  return offered ? 'run' : 'refuse';
}

/** What the model is told when the policy `never` refuses a call. */
export function refusedByPolicyMessage(tool: string): string {
  return `"${tool}" is marked destructive and toolRouter.selection.allowDestructiveTools is "never", so the router did not run it. Tell the user; setting it to "confirm" lets them approve such calls one by one.`;
}

/** What the model is told when the user says no. */
export function declinedMessage(tool: string): string {
  return `The user declined to run "${tool}" with these arguments, so it was not run. Do not call it again for this request unless the user asks; say what you would have done, or finish what you can without it.`;
}

/** Arguments longer than this are cut in a confirmation: enough to judge a call, never a wall of text. */
export const MAX_CONFIRMATION_ARGUMENT_CHARS = 2000;

/** A call's arguments as the user reads them in a confirmation: indented JSON, cut when long. */
export function argumentsForConfirmation(args: unknown): string {
  let text: string;
  if (typeof args === 'string') {
    // The router accepts arguments as JSON text too; shown indented when they parse.
    try {
      text = JSON.stringify(JSON.parse(args), null, 2);
    } catch {
      text = args;
    }
  } else {
    text = JSON.stringify(args ?? {}, null, 2) ?? String(args);
  }
  return text.length > MAX_CONFIRMATION_ARGUMENT_CHARS ? `${text.slice(0, MAX_CONFIRMATION_ARGUMENT_CHARS - 1)}…` : text;
}

/**
 * The Markdown of a confirmation naming the tool, its server and its arguments. The description is the
 * server's text (untrusted): it goes in a fenced block, so it cannot render links or markup; so do the
 * arguments. Fences are made longer than any backtick run inside.
 */
export function confirmationMarkdown(tool: { readonly name: string; readonly server: string; readonly description: string }, args: unknown, destructive: boolean): string {
  const fence = (text: string): string => {
    const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
    const ticks = '`'.repeat(longest + 1);
    return `${ticks}\n${text}\n${ticks}`;
  };
  const description = tool.description.length > MAX_CONFIRMATION_DESCRIPTION_CHARS ? `${tool.description.slice(0, MAX_CONFIRMATION_DESCRIPTION_CHARS - 1)}…` : tool.description;
  const name = `\`${tool.name}\` (server \`${tool.server.replace(/`/g, '')}\`)`;
  return [
    destructive ? `${name} is marked destructive by its server: it may delete or overwrite data.` : `${name} is not marked read-only by its server.`,
    '',
    fence(description),
    '',
    'Arguments:',
    '',
    fence(argumentsForConfirmation(args)),
  ].join('\n');
}

/** The tool's description in a confirmation: what it does, not its whole manual. */
const MAX_CONFIRMATION_DESCRIPTION_CHARS = 300;
