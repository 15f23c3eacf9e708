import { createHash } from 'node:crypto';

/**
 * Exposed tool names: `{server}_{tool}`, made safe for every model provider.
 *
 * Providers accept `^[a-zA-Z0-9_-]{1,64}$`. Sanitising maps every other character to `_`; names longer
 * than 64 characters keep their head and their tail (where names of one family usually differ:
 * `..._by_id` vs `..._by_email`). When two tools still end up with one name, every one of them gets a
 * suffix made from a hash of its original (server, tool) pair. The suffix depends only on that pair, so
 * the result is deterministic and does not change when unrelated tools come or go.
 */

export const MAX_TOOL_NAME_LENGTH = 64;
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;
/** The server part never takes more than this, so the tool part always keeps at least 64 - 24 - 1 characters. */
export const MAX_SERVER_PREFIX_LENGTH = 24;
/** 6 hex digits: 16.7M values, so two colliding names sharing a suffix is vanishingly unlikely. */
const COLLISION_SUFFIX_HEX = 6;
const ELISION_MARK = '_';

export function sanitizeNamePart(raw: string): string {
  const cleaned = raw.replace(/[^a-zA-Z0-9_-]/g, '_');
  return cleaned.length > 0 ? cleaned : '_';
}

/** Shortens `text` to `max` characters, keeping its start and its end around a `_` mark. */
export function elideMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= 1) return text.slice(0, max);
  const keep = max - ELISION_MARK.length;
  const head = Math.ceil(keep / 2);
  const tail = keep - head;
  return text.slice(0, head) + ELISION_MARK + (tail > 0 ? text.slice(text.length - tail) : '');
}

export function shortHash(...parts: string[]): string {
  return createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, COLLISION_SUFFIX_HEX);
}

/** The sanitised prefix for a server name, at most {@link MAX_SERVER_PREFIX_LENGTH} characters. */
export function serverPrefix(serverName: string): string {
  return elideMiddle(sanitizeNamePart(serverName), MAX_SERVER_PREFIX_LENGTH);
}

function candidateName(prefix: string, tool: string): string {
  const toolPart = sanitizeNamePart(tool);
  return `${prefix}_${elideMiddle(toolPart, MAX_TOOL_NAME_LENGTH - prefix.length - 1)}`;
}

function withSuffix(name: string, suffix: string): string {
  const room = MAX_TOOL_NAME_LENGTH - suffix.length - 1;
  return `${elideMiddle(name, room)}_${suffix}`;
}

export interface NameRequest {
  readonly server: string;
  readonly tool: string;
}

/**
 * Assigns a unique exposed name to every (server, tool) pair.
 * `serverPrefixes` maps server names to their (already unique) prefixes, see {@link assignServerPrefixes}.
 * Returns names in the order of `requests`.
 */
export function assignToolNames(requests: readonly NameRequest[], serverPrefixes: ReadonlyMap<string, string>): string[] {
  const candidates = requests.map((r) => candidateName(serverPrefixes.get(r.server) ?? serverPrefix(r.server), r.tool));
  return resolveCollisions(candidates, requests.map((r) => [r.server, r.tool]));
}

/**
 * Server prefixes must differ too: `my server` and `my.server` both sanitise to `my_server`.
 * Colliding ones get a hash suffix of their original name.
 */
export function assignServerPrefixes(serverNames: readonly string[]): Map<string, string> {
  const candidates = serverNames.map(serverPrefix);
  const resolved = resolveCollisions(candidates, serverNames.map((n) => [n]), MAX_SERVER_PREFIX_LENGTH);
  return new Map(serverNames.map((n, i) => [n, resolved[i]!]));
}

function resolveCollisions(candidates: readonly string[], identities: readonly string[][], maxLength = MAX_TOOL_NAME_LENGTH): string[] {
  const counts = new Map<string, number>();
  for (const c of candidates) counts.set(c.toLowerCase(), (counts.get(c.toLowerCase()) ?? 0) + 1);
  const out = candidates.map((c, i) => {
    // Compared case-insensitively: some providers and file systems fold case.
    if ((counts.get(c.toLowerCase()) ?? 0) < 2) return c;
    const suffix = shortHash(...identities[i]!);
    return maxLength === MAX_TOOL_NAME_LENGTH ? withSuffix(c, suffix) : `${elideMiddle(c, maxLength - suffix.length - 1)}_${suffix}`;
  });
  // A suffixed name could, in theory, equal another tool's plain name; extend with an index until unique.
  const seen = new Set<string>();
  return out.map((name) => {
    let unique = name;
    for (let n = 2; seen.has(unique.toLowerCase()); n++) unique = withSuffix(name, String(n));
    seen.add(unique.toLowerCase());
    return unique;
  });
}

/**
 * `name` with the hash suffix of its (server, item) identity, as a collision gets it. For names given out
 * a page at a time (prompts through the gateway), where a clash shows only against an earlier page.
 */
export function withIdentitySuffix(name: string, ...identity: string[]): string {
  return withSuffix(name, shortHash(...identity));
}

/** Code-unit order, the same on every machine and locale: names are sorted with it wherever order decides a name. */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Suggestions offered for an unknown tool name. */
const MAX_NAME_SUGGESTIONS = 3;

/** Names that share the most with `name` (substring first, then common-prefix length). */
export function suggestNames(name: string, known: readonly string[]): string[] {
  const lower = name.toLowerCase();
  const tail = lower.includes('_') ? lower.slice(lower.indexOf('_') + 1) : lower;
  const scored = known
    .map((k) => {
      const kl = k.toLowerCase();
      let score = 0;
      if (kl.endsWith(`_${lower}`) || kl.endsWith(`_${tail}`)) score += 100;
      if (kl.includes(tail) || tail.includes(kl.slice(kl.indexOf('_') + 1))) score += 50;
      let p = 0;
      while (p < kl.length && p < lower.length && kl[p] === lower[p]) p++;
      score += p;
      return { k, score };
    })
    .filter((s) => s.score >= 4)
    .sort((x, y) => y.score - x.score || compareNames(x.k, y.k));
  return scored.slice(0, MAX_NAME_SUGGESTIONS).map((s) => s.k);
}
