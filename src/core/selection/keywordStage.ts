import picomatch from 'picomatch';
import { serverPrefix } from '../router/naming';
import { describeError } from '../errors/describeError';

/**
 * The keyword stage (a regex selector): named groups of tools, and routes that map regular
 * expressions over the prompt to groups. When no route matches, the default groups apply. Every server
 * is a group of its own, named after the server. Bad patterns are reported, never thrown.
 */

export interface KeywordRoute {
  /** Shown as `keyword:<name>` in the selection; defaults to the pattern. */
  readonly name?: string;
  /** A regular expression over the prompt (case-insensitive unless `flags` says otherwise). */
  readonly pattern: string;
  readonly flags?: string;
  readonly groups: readonly string[];
}

export interface KeywordConfig {
  /** Group name → tool names or globs over exposed names, e.g. `["github_*", "files_read_file"]`. */
  readonly groups: Readonly<Record<string, readonly string[]>>;
  readonly routes: readonly KeywordRoute[];
  /** Groups used when no route matches; empty means "no keyword picks" then. */
  readonly defaultGroups: readonly string[];
}

export const EMPTY_KEYWORD_CONFIG: KeywordConfig = { groups: {}, routes: [], defaultGroups: [] };

/** Regexes over prompts run on every turn; refuse patterns long enough to be a mistake or an attack. */
const MAX_PATTERN_LENGTH = 500;

interface CompiledRoute {
  readonly name: string;
  readonly regex: RegExp;
  readonly groups: readonly string[];
}

export class KeywordStage {
  readonly issues: string[] = [];
  private readonly routes: CompiledRoute[] = [];
  private readonly groupMatchers = new Map<string, (name: string) => boolean>();

  constructor(private readonly config: KeywordConfig, servers: readonly string[]) {
    for (const server of servers) this.groupMatchers.set(server, picomatch(`${serverPrefix(server)}_*`));
    for (const [group, members] of Object.entries(config.groups)) {
      const patterns = members.filter((m): m is string => typeof m === 'string' && m.length > 0);
      if (patterns.length !== members.length) this.issues.push(`Group "${group}" has entries that are not tool names or globs; they are ignored.`);
      try {
        // A glob becomes a regex; picomatch also matches plain names exactly.
        this.groupMatchers.set(group, patterns.length ? picomatch([...patterns]) : () => false);
      } catch (error) {
        this.issues.push(`Group "${group}" has an invalid glob: ${describeError(error)}`);
      }
    }
    config.routes.forEach((route, i) => {
      const name = route.name ?? route.pattern;
      if (typeof route.pattern !== 'string' || route.pattern.length === 0) {
        this.issues.push(`Route ${i + 1} has no pattern; it is ignored.`);
        return;
      }
      if (route.pattern.length > MAX_PATTERN_LENGTH) {
        this.issues.push(`Route "${name.slice(0, 40)}…" has a pattern longer than ${MAX_PATTERN_LENGTH} characters; it is ignored.`);
        return;
      }
      let regex: RegExp;
      try {
        regex = new RegExp(route.pattern, route.flags ?? 'i');
      } catch (error) {
        this.issues.push(`Route "${name}" has an invalid regular expression (${describeError(error)}); it is ignored. Fix the pattern in toolRouter.selection.routes.`);
        return;
      }
      for (const g of route.groups) if (!this.groupMatchers.has(g)) this.issues.push(`Route "${name}" names the group "${g}", which does not exist (groups: ${[...this.groupMatchers.keys()].join(', ')}).`);
      this.routes.push({ name, regex, groups: route.groups });
    });
    for (const g of config.defaultGroups) if (!this.groupMatchers.has(g)) this.issues.push(`Default group "${g}" does not exist.`);
  }

  /** Tool name → the routes that picked it (`keyword:<route>` or `keyword:default`). */
  match(prompt: string, toolNames: readonly string[]): Map<string, string[]> {
    const picked = new Map<string, string[]>();
    const add = (groups: readonly string[], stage: string): void => {
      for (const g of groups) {
        const matcher = this.groupMatchers.get(g);
        if (!matcher) continue;
        for (const name of toolNames) {
          if (!matcher(name)) continue;
          const stages = picked.get(name) ?? [];
          if (!stages.includes(stage)) stages.push(stage);
          picked.set(name, stages);
        }
      }
    };
    let matched = false;
    for (const route of this.routes) {
      if (route.regex.test(prompt)) {
        matched = true;
        add(route.groups, `keyword:${route.name}`);
      }
    }
    if (!matched) add(this.config.defaultGroups, 'keyword:default');
    return picked;
  }

  /** True when any route or default group could pick something; selection skips the stage otherwise. */
  get active(): boolean {
    return this.routes.length > 0 || this.config.defaultGroups.length > 0;
  }

  groupMatches(group: string, toolName: string): boolean {
    return this.groupMatchers.get(group)?.(toolName) ?? false;
  }
}
