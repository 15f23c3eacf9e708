/**
 * The extension's settings: their types, their defaults (in one place) and how a value is checked. This
 * file imports nothing from `vscode`, so a plain-Node test can check that package.json declares exactly
 * these defaults.
 */
export const SETTINGS_SECTION = 'toolRouter';

import type { KeywordRoute } from '../core/selection/keywordStage';
import { DEFAULT_CAP, DEFAULT_MIN_TOOLS, DEFAULT_DEPTH } from '../core/selection/toolSelector';
import type { EmbeddingProvider } from '../core/selection/selectionEngine';
import { callPolicy, DEFAULT_DESTRUCTIVE_POLICY, destructivePolicyFrom, VSCODE_ALLOW_HINTS, type CallPolicy, type DestructivePolicy } from '../core/policy/callPolicy';
import { DEFAULT_MAX_STEPS } from '../core/chat/chatTurn';
import { DEFAULT_COST_LIMITS } from '../core/guards/costMonitor';
import { DEFAULT_LEARNING_ENABLED } from '../core/learning/usageMemory';

export interface ExtensionSettings {
  /** Servers in mcp.json format (`{"servers": {...}, "inputs": [...]}`), or a bare map of servers. */
  readonly servers: Record<string, unknown>;
  /** Read `.vscode/mcp.json` of each workspace folder. */
  readonly readWorkspaceMcpJson: boolean;
  readonly readUserMcpJson: boolean;
  /** Show the ready/total servers and tool count in the status bar. */
  readonly showStatusBar: boolean;
  readonly 'embeddings.provider': EmbeddingProvider;
  /** `default` (the bundled model), a model folder (local) or a model name (ollama/openai). */
  readonly 'embeddings.model': string;
  readonly 'embeddings.endpoint': string;
  /** Offer, once, to download a pinned pretrained model while the bundled one is in use. */
  readonly 'embeddings.offerPretrainedModel': boolean;
  readonly 'selection.minTools': number;
  /** Send ranked tools while within this share of the drop from the best score to the cap-th (0–1). */
  readonly 'selection.depth': number;
  readonly 'selection.cap': number;
  readonly 'selection.coreTools': string[];
  readonly 'selection.allowedTools': string[];
  /** `confirm` | `never` | `always`; the old boolean still works (true → always, false → never). */
  readonly 'selection.allowDestructiveTools': DestructivePolicy | boolean;
  /** Destructive tools, by exposed name, that run without asking whatever the policy. */
  readonly 'selection.allowedDestructiveTools': string[];
  readonly 'selection.groups': Record<string, string[]>;
  readonly 'selection.routes': KeywordRoute[];
  readonly 'selection.defaultGroups': string[];
  /** Keep tools with a high-severity poisoning flag (src/core/security/toolPoisoning.ts) out of selection. */
  readonly 'security.quarantineFlaggedTools': boolean;
  readonly 'chat.maxSteps': number;
  readonly 'cost.enabled': boolean;
  readonly 'cost.hourlyTokenCap': number;
  readonly 'cost.shortWindowMinutes': number;
  readonly 'cost.spikeMultiplier': number;
  readonly 'cost.minimumBaselineTokensPerMinute': number;
  /** Tool name or glob → `{sameArgs, emptyResults}` loop thresholds. */
  readonly 'loops.perTool': Record<string, { sameArgs?: number; emptyResults?: number }>;
  /** Record prompts and the tools they needed in the workspace's storage, and raise those tools later. */
  readonly 'learning.enabled': boolean;
}

/** Selection defaults come from the core, so the settings and the CLI can never disagree. */
export const SETTING_DEFAULTS: ExtensionSettings = {
  servers: {},
  readWorkspaceMcpJson: true,
  readUserMcpJson: true,
  showStatusBar: true,
  'embeddings.provider': 'local',
  'embeddings.model': 'default',
  'embeddings.endpoint': '',
  'embeddings.offerPretrainedModel': true,
  'selection.minTools': DEFAULT_MIN_TOOLS,
  'selection.depth': DEFAULT_DEPTH,
  'selection.cap': DEFAULT_CAP,
  'selection.coreTools': [],
  'selection.allowedTools': [],
  'selection.allowDestructiveTools': DEFAULT_DESTRUCTIVE_POLICY,
  'selection.allowedDestructiveTools': [],
  'selection.groups': {},
  'selection.routes': [],
  'selection.defaultGroups': [],
  // On: only high-severity flags quarantine, and a poisoned description does its harm the moment it is
  // sent to the model. Off is one setting away.
  'security.quarantineFlaggedTools': true,
  'chat.maxSteps': DEFAULT_MAX_STEPS,
  'cost.enabled': DEFAULT_COST_LIMITS.enabled,
  'cost.hourlyTokenCap': DEFAULT_COST_LIMITS.hourlyTokenCap,
  'cost.shortWindowMinutes': DEFAULT_COST_LIMITS.shortWindowMinutes,
  'cost.spikeMultiplier': DEFAULT_COST_LIMITS.spikeMultiplier,
  'cost.minimumBaselineTokensPerMinute': DEFAULT_COST_LIMITS.minimumBaselineTokensPerMinute,
  'loops.perTool': {},
  'learning.enabled': DEFAULT_LEARNING_ENABLED,
};

/** The embedding providers `embeddings.provider` takes. */
const PROVIDERS: ReadonlySet<string> = new Set(['local', 'ollama', 'openai', 'none']);

/**
 * A setting's value checked against its default's type (and, for the few settings with a fixed set of
 * values, against that set): the value to use, and what was wrong when it was not usable. Unset settings
 * take their defaults without a problem. Kept free of `vscode`, so plain-Node tests check it.
 */
export function checkSetting<K extends keyof ExtensionSettings>(key: K, value: unknown): { value: ExtensionSettings[K]; problem?: string } {
  const fallback = SETTING_DEFAULTS[key];
  if (value === undefined || value === null) return { value: fallback };
  const use = (ok: boolean, expected: string): { value: ExtensionSettings[K]; problem?: string } =>
    ok ? { value: value as ExtensionSettings[K] } : { value: fallback, problem: `${SETTINGS_SECTION}.${key} is ${JSON.stringify(value)?.slice(0, 80)}, which is not ${expected}; the default ${JSON.stringify(fallback)} is used instead.` };
  if (key === 'selection.allowDestructiveTools') return use(destructivePolicyFrom(value) !== undefined, '"confirm", "never" or "always"');
  if (key === 'embeddings.provider') return use(typeof value === 'string' && PROVIDERS.has(value), 'one of local, ollama, openai, none');
  if (typeof fallback === 'boolean') return use(typeof value === 'boolean', 'true or false');
  if (typeof fallback === 'number') return use(typeof value === 'number' && Number.isFinite(value) && value >= 0, 'a number of at least 0');
  if (typeof fallback === 'string') return use(typeof value === 'string', 'text');
  if (Array.isArray(fallback)) return use(Array.isArray(value), 'a list');
  return use(typeof value === 'object' && !Array.isArray(value), 'an object');
}

/** toolRouter.selection.allowDestructiveTools as a policy: the old boolean keeps working, anything else is the default. */
export function destructivePolicySetting(value: unknown): DestructivePolicy {
  return destructivePolicyFrom(value) ?? DEFAULT_DESTRUCTIVE_POLICY;
}

/** The call policy of every VS Code surface, from its two settings. */
export function callPolicySetting(policy: unknown, allowed: unknown): CallPolicy {
  const names = Array.isArray(allowed) ? allowed.filter((n): n is string => typeof n === 'string') : [];
  return callPolicy(destructivePolicySetting(policy), names, VSCODE_ALLOW_HINTS);
}
