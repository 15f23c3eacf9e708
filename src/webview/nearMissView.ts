import type { NearMiss, NearMissWhy, Selection } from '../core/selection/selectionTypes';
import type { PinReply } from './protocol';
import { barFraction, scoreScale } from './viewModel';

/**
 * The panel's "Not sent" list: the best tools a selection left out, why, and whether pinning one would
 * send it. Pure, like viewModel.ts, so every line on screen is unit-tested under plain Node.
 */

/** The setting a pin writes; named in what the panel says, so people know where to undo it. */
export const CORE_TOOLS_SETTING = 'toolRouter.selection.coreTools';

const WHY_LABELS: Readonly<Record<NearMissWhy, string>> = {
  'below-count': 'fewer tools wanted',
  'below-cutoff': 'under the cutoff',
  'over-cap': 'over the cap',
  policy: 'kept out by a policy',
};

export interface NearMissRowView {
  readonly name: string;
  readonly description?: string;
  /** The number the bar shows, on the same scale as the chosen tools'. */
  readonly scoreText: string;
  readonly bar?: number;
  readonly whyText: string;
  readonly reason: string;
  /**
   * Whether Pin would send it: core tools skip the count, the cutoff and the cap, but not the policies
   * (allowed tools, destructive tools, quarantine), so a tool a policy kept out gets no Pin button.
   */
  readonly pinnable: boolean;
}

export function nearMissRows(selection: Selection, descriptions: Readonly<Record<string, string>> = {}): NearMissRowView[] {
  const scale = scoreScale(selection);
  // Selections the webview saved before near misses existed come back from getState without them.
  return (selection.nearMisses ?? []).map((n: NearMiss) => {
    const useCosine = scale.kind === 'cosine' && n.cosine !== undefined;
    const bar = barFraction(scale, useCosine ? n.cosine : scale.kind === 'score' ? n.score : undefined);
    const description = descriptions[n.name];
    return {
      name: n.name,
      ...(description !== undefined ? { description } : {}),
      scoreText: useCosine ? `cosine ${(n.cosine ?? 0).toFixed(2)}` : `score ${n.score.toFixed(2)}`,
      ...(bar !== undefined ? { bar } : {}),
      whyText: WHY_LABELS[n.why] ?? n.why,
      reason: n.reason,
      pinnable: n.why !== 'policy',
    };
  });
}

/** Core tools are globs: a name with these characters would pin more than the one tool. */
const GLOB_CHARACTERS = /[*?[\]{}()!+@\\|]/;

/** Why the extension will not pin `tool` (not offered by any server now, or read as a pattern); undefined when it may. */
export function pinRefusal(tool: string, offered: ReadonlySet<string>): string | undefined {
  if (!offered.has(tool)) return 'no server offers a tool of that name now';
  if (GLOB_CHARACTERS.test(tool)) return `its name would read as a pattern; add it to ${CORE_TOOLS_SETTING} by hand, escaped`;
  return undefined;
}

/** What the status line says when a pin request is answered. */
export function pinStatusText(reply: PinReply): string {
  const where = reply.scope === 'workspace' ? "this workspace's settings" : 'your user settings (no folder is open)';
  switch (reply.outcome) {
    case 'added':
      return `Pinned ${reply.tool}: added to ${CORE_TOOLS_SETTING} in ${where}, so it is sent with every prompt.`;
    case 'already':
      return `${reply.tool} is already in ${CORE_TOOLS_SETTING}.`;
    case 'refused':
      return `Did not pin ${reply.tool}: ${reply.detail ?? 'the request was refused'}.`;
    case 'failed':
      return `Pinning ${reply.tool} failed: ${reply.detail ?? 'the setting could not be written'}. Add it to ${CORE_TOOLS_SETTING} by hand.`;
  }
}

/** The short announcement after Explain: how many tools were chosen and left out. */
export function explainedText(selection: Selection): string {
  const chosen = selection.tools.length;
  const missed = selection.nearMisses?.length ?? 0;
  return `Explained: ${chosen} tool${chosen === 1 ? '' : 's'} chosen${missed ? `, ${missed} close behind not sent` : ''}.`;
}
