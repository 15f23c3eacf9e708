import { declinedMessage, notAskedMessage, timedOutMessage } from './callPolicy';

/**
 * Asking a person before a call runs (the call policy's `ask`): how the question shows the call, and how
 * its answer is told apart, so a question nobody answered is never reported as a "no".
 */

export type ConfirmAnswer =
  | { readonly answer: 'yes' }
  | { readonly answer: 'no' }
  | { readonly answer: 'timed-out'; readonly waitedMs: number }
  | { readonly answer: 'failed'; readonly reason: string };

/** Only a yes runs the call. */
export function confirmed(answer: ConfirmAnswer): boolean {
  return answer.answer === 'yes';
}

/** What the model is told when a call did not run because of the answer. */
export function unconfirmedMessage(tool: string, answer: Exclude<ConfirmAnswer, { answer: 'yes' }>): string {
  if (answer.answer === 'no') return declinedMessage(tool);
  if (answer.answer === 'timed-out') return timedOutMessage(tool, answer.waitedMs);
  return notAskedMessage(tool, answer.reason);
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
