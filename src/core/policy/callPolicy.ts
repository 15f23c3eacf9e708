/**
 * The call policy: the one place that decides, for every surface (selection and search, `@router`, Call
 * Tool, the gateway, the CLI), whether a tool is offered and whether a call to it runs, asks the user
 * first, or is refused. Surfaces only supply what they know (can they ask a person? did a person name
 * this tool?) and carry out the verdict, so they cannot disagree.
 *
 * Fail closed: under `confirm`, a call that needs a person's yes and has nobody to ask is refused, and
 * the refusal says how to allow it.
 */

/**
 * What happens to tools their server marks `destructiveHint`:
 * - `confirm` (default): offered like any tool; each call asks a person first.
 * - `never`: never offered and never run, whoever asks (a `#` pin or Call Tool included): the user chose
 *   the strictest setting, and a pin is often written by a prompt file rather than by the person now.
 * - `always`: offered, and run without asking.
 * Tools on the allow list run without asking under `confirm` and `never`. In `@router`, tools marked
 * neither read-only nor non-destructive ask under `confirm` and `never` too ({@link CallAudience}).
 */
export type DestructivePolicy = 'confirm' | 'never' | 'always';

export const DEFAULT_DESTRUCTIVE_POLICY: DestructivePolicy = 'confirm';

/** A setting's value as a policy: the old boolean keeps working (true → `always`, false → `never`). */
export function destructivePolicyFrom(value: unknown): DestructivePolicy | undefined {
  if (value === true) return 'always';
  if (value === false) return 'never';
  if (value === 'confirm' || value === 'never' || value === 'always') return value;
  return undefined;
}

/** Where the person changes the policy, named in every refusal; each surface says it in its own terms. */
export interface AllowHints {
  /** How to choose the policy `always`. */
  readonly policy: string;
  /** How to put one tool on the allow list (`{tool}` is replaced by its name). */
  readonly allowList: string;
}

export const VSCODE_ALLOW_HINTS: AllowHints = {
  policy: 'set toolRouter.selection.allowDestructiveTools to "always"',
  allowList: 'add "{tool}" to toolRouter.selection.allowedDestructiveTools',
};

export const CLI_ALLOW_HINTS: AllowHints = {
  policy: 'give --destructive-tools always (or "router": {"destructiveTools": "always"} in the config)',
  allowList: 'give --allow-destructive {tool} (or list it in "router": {"allowedDestructiveTools": [...]} in the config)',
};

export interface CallPolicy {
  readonly destructiveTools: DestructivePolicy;
  /** Destructive tools, by exposed name (`memory_delete_entities`), that run without asking. */
  readonly allowedDestructiveTools: readonly string[];
  readonly hints: AllowHints;
}

export function callPolicy(destructiveTools: DestructivePolicy = DEFAULT_DESTRUCTIVE_POLICY, allowedDestructiveTools: readonly string[] = [], hints: AllowHints = VSCODE_ALLOW_HINTS): CallPolicy {
  return { destructiveTools, allowedDestructiveTools, hints };
}

/** The policy every surface starts from: `confirm`, nothing allow-listed. */
export const DEFAULT_CALL_POLICY: CallPolicy = callPolicy();

/** What the policy needs of a tool. */
export interface PolicyTool {
  readonly name: string;
  readonly annotations?: { readonly destructiveHint?: boolean; readonly readOnlyHint?: boolean } | undefined;
}

/**
 * Marked destructive: only an explicit `destructiveHint: true` counts here, because this mark also hides
 * tools under `never` and refuses them to clients that cannot be asked; see {@link isUnmarked}.
 */
export function isDestructive(tool: PolicyTool): boolean {
  return tool.annotations?.destructiveHint === true;
}

/**
 * Not marked destructive, but not marked safe either: neither `readOnlyHint: true` nor
 * `destructiveHint: false`. The MCP spec reads such a tool as one that may destroy.
 */
export function isUnmarked(tool: PolicyTool): boolean {
  return !isDestructive(tool) && tool.annotations?.readOnlyHint !== true && tool.annotations?.destructiveHint !== false;
}

/** Who is calling, as far as the policy cares. */
export interface CallAudience {
  /** A person can be asked before this call (a modal, an elicitation, a terminal prompt). */
  readonly canAsk: boolean;
  /**
   * A person named this one tool in a command they typed (the CLI's `call NAME`, Call Tool after its own
   * question): that is their confirmation, so `confirm` runs it without asking again.
   */
  readonly confirmedByPerson?: boolean;
  /**
   * The router runs the model itself (`@router`), so nothing else checks a call before it runs: unmarked
   * tools ask too, as VS Code's agent mode asks before every tool not marked read-only. A gateway client
   * sees the server's own hints and asks by its own rules, so there only marked tools ask.
   */
  readonly asksForUnmarked?: boolean;
}

export type Offer = { readonly offered: true; readonly asks: boolean } | { readonly offered: false; readonly reason: string };

export type CallVerdict =
  | { readonly verdict: 'run' }
  | { readonly verdict: 'ask' }
  | { readonly verdict: 'refuse'; readonly why: 'never' | 'cannot-ask'; readonly message: string };

function allowListed(policy: CallPolicy, tool: PolicyTool): boolean {
  return policy.allowedDestructiveTools.includes(tool.name);
}

/**
 * Whether a call runs, asks a person first, or is refused. Under `never`, an unmarked tool asks rather
 * than being hidden: `never` is about tools their server says destroy, and most servers mark nothing.
 */
export function decideCall(policy: CallPolicy, tool: PolicyTool, audience: CallAudience): CallVerdict {
  if (policy.destructiveTools === 'always' || allowListed(policy, tool)) return { verdict: 'run' };
  const marked = isDestructive(tool);
  if (!marked && !(audience.asksForUnmarked === true && isUnmarked(tool))) return { verdict: 'run' };
  if (marked && policy.destructiveTools === 'never') return { verdict: 'refuse', why: 'never', message: refusedByNeverMessage(policy, tool.name) };
  if (audience.confirmedByPerson) return { verdict: 'run' };
  if (audience.canAsk) return { verdict: 'ask' };
  return { verdict: 'refuse', why: 'cannot-ask', message: cannotAskMessage(policy, tool.name, marked) };
}

/**
 * Whether a tool is offered to a model at all: a tool whose every call would be refused is not, so the
 * model does not plan around it. `asks` tells the model the call will ask a person first.
 */
export function offerTool(policy: CallPolicy, tool: PolicyTool, audience: CallAudience): Offer {
  const verdict = decideCall(policy, tool, audience);
  if (verdict.verdict === 'refuse') return { offered: false, reason: verdict.why === 'never' ? `marked destructive, and the policy is "never"; to offer it, ${allowHint(policy, tool.name)}` : `${markText(isDestructive(tool))}, and nobody can be asked to confirm it here; to run it, ${allowHint(policy, tool.name)}` };
  return { offered: true, asks: verdict.verdict === 'ask' };
}

/** What the model is told about a tool it is offered, matching the policy in force (nothing when it just runs). */
export function offerNote(offer: Offer): string | undefined {
  return offer.offered && offer.asks ? 'asks the user before it runs' : undefined;
}

function allowHint(policy: CallPolicy, tool: string): string {
  return `${policy.hints.allowList.replace('{tool}', tool)}, or ${policy.hints.policy}`;
}

function refusedByNeverMessage(policy: CallPolicy, tool: string): string {
  return `"${tool}" is marked destructive and the destructive-tools policy is "never", so the router did not run it. Tell the user; to allow it, ${allowHint(policy, tool)}.`;
}

/** How a tool that asks is described: marked destructive, or marked neither read-only nor additive. */
function markText(marked: boolean): string {
  return marked ? 'marked destructive' : 'not marked read-only or non-destructive by its server';
}

function cannotAskMessage(policy: CallPolicy, tool: string, marked: boolean): string {
  return `"${tool}" is ${markText(marked)} and the destructive-tools policy is "${policy.destructiveTools}", but this client cannot ask the user (it does not support elicitation), so the router did not run it. Tell the user; to allow it, ${allowHint(policy, tool)}.`;
}

/** What the model is told when the user says no. */
export function declinedMessage(tool: string): string {
  return `The user declined to run "${tool}" with these arguments, so it was not run. Do not call it again for this request unless the user asks; say what you would have done, or finish what you can without it.`;
}

/** What the model is told when the question went unanswered: not a "no", so it may be asked again later. */
export function timedOutMessage(tool: string, waitedMs: number): string {
  return `The confirmation to run "${tool}" timed out after ${Math.round(waitedMs / 1000)} s without an answer, so it was not run. Tell the user; they can ask for it again when they are there to confirm.`;
}

/** What the model is told when the question itself failed (closed, cancelled, the client errored). */
export function notAskedMessage(tool: string, reason: string): string {
  return `The router could not ask the user to confirm "${tool}" (${reason}), so it was not run.`;
}
