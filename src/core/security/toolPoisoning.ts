/**
 * Tool poisoning checks: reads what a server says about its tools (name, description, the schema's
 * parameter descriptions) and flags text written for the model rather than the user, hidden characters,
 * and tools that shadow another server's tools. Pure and synchronous; the extension quarantines tools
 * with a high-severity flag (toolRouter.security.quarantineFlaggedTools) and shows every flag.
 *
 * These are heuristics over text. They catch the known shapes of the attack (see SECURITY.md), not
 * every paraphrase, and say nothing about what a tool actually does when called.
 */

export type FlagKind = 'instruction' | 'secret-access' | 'hidden-unicode' | 'long-description' | 'shadowing';
/** `high`: written to steer the model or hide text; quarantined by default. `medium`/`low`: shown only. */
export type FlagSeverity = 'high' | 'medium' | 'low';

export interface ToolFlag {
  readonly kind: FlagKind;
  readonly severity: FlagSeverity;
  /** One line: where (description, parameter, name) and what was found. */
  readonly reason: string;
}

/** A tool as its server lists it: the original (not the exposed) name. */
export interface InspectedTool {
  readonly name: string;
  readonly server: string;
  readonly description?: string | undefined;
  readonly inputSchema?: unknown;
}

/**
 * Descriptions longer than this are flagged. The longest in the saved real catalogues (test/fixtures/
 * catalogues) is 457 characters; four times that leaves room for honest documentation, while a prompt
 * buried in pages of text stands out.
 */
export const LONG_DESCRIPTION_CHARS = 2_000;
/** The same for one parameter's description, which honest schemas keep to a sentence or two. */
export const LONG_PARAMETER_DESCRIPTION_CHARS = 1_000;
/** How much of the schema is walked for parameter descriptions: hostile schemas can be huge. */
const MAX_SCHEMA_NODES = 2_000;
const MAX_SCHEMA_DEPTH = 16;
/** Quoted evidence in a reason is cut to this, so a reason stays one line. */
const MAX_EVIDENCE_CHARS = 60;

// ---------------------------------------------------------------------------------------------------
// Hidden characters

const TAG_CHARS = /[\u{E0000}-\u{E007F}]/gu;
const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069]/gu;
/** Zero-width space, non-joiner, joiner, word joiner, BOM, Mongolian vowel separator, invisible operators. */
const ZERO_WIDTH = /[\u200B-\u200D\u2060-\u2064\uFEFF\u180E]/gu;
/** Joiners are legitimate between emoji and inside scripts that need them (Arabic, Indic, …). */
const JOINER_CONTEXT = /[\p{Extended_Pictographic}\p{M}\u0080-\u{10FFFF}]/u;

interface HiddenFinding {
  readonly severity: FlagSeverity;
  readonly what: string;
}

/** Every hidden character this module looks for is outside ASCII, so ASCII text (most of it) skips those passes. */
const NOT_ASCII = /[\u0080-\u{10FFFF}]/u;

function findHidden(text: string): HiddenFinding[] {
  const found: HiddenFinding[] = [];
  if (!NOT_ASCII.test(text)) return found;
  const tags = text.match(TAG_CHARS);
  if (tags) {
    const decoded = tags.map((c) => String.fromCodePoint((c.codePointAt(0) ?? 0xe0000) - 0xe0000)).join('').replace(/[^\x20-\x7e]/g, '');
    found.push({ severity: 'high', what: `${tags.length} invisible Unicode tag character(s)${decoded.trim() ? ` spelling "${cut(decoded)}"` : ''}` });
  }
  const bidi = text.match(BIDI_CONTROLS);
  if (bidi) found.push({ severity: 'high', what: `${bidi.length} bidirectional control character(s) that reorder how the text displays` });
  let zeroWidth = 0;
  for (const m of text.matchAll(ZERO_WIDTH)) {
    const i = m.index;
    const ch = m[0];
    if (ch === '\u200C' || ch === '\u200D') {
      const before = text.slice(Math.max(0, i - 2), i);
      const after = text.slice(i + 1, i + 3);
      if (JOINER_CONTEXT.test(before) && JOINER_CONTEXT.test(after)) continue;
    }
    zeroWidth++;
  }
  if (zeroWidth > 0) found.push({ severity: 'medium', what: `${zeroWidth} zero-width character(s)` });
  return found;
}

/** The text the model effectively reads: hidden characters dropped, compatibility forms folded, one line. */
function normalise(text: string): string {
  const visible = NOT_ASCII.test(text) ? text.replace(TAG_CHARS, '').replace(BIDI_CONTROLS, '').replace(ZERO_WIDTH, '').normalize('NFKC') : text;
  return visible.replace(/\s+/g, ' ').toLowerCase();
}

/** The ASCII a run of tag characters spells, which a model may read even though the user cannot. */
function decodeTags(text: string): string {
  return (text.match(TAG_CHARS) ?? []).map((c) => String.fromCodePoint((c.codePointAt(0) ?? 0xe0000) - 0xe0000)).join('');
}

function cut(text: string): string {
  const line = text.replace(/\s+/g, ' ').replace(/[^\x20-\x7e\u00a0-\u024f]/g, '').trim();
  return line.length > MAX_EVIDENCE_CHARS ? `${line.slice(0, MAX_EVIDENCE_CHARS - 1)}…` : line;
}

// ---------------------------------------------------------------------------------------------------
// Text aimed at the model

interface TextRule {
  readonly kind: FlagKind;
  readonly severity: FlagSeverity;
  readonly pattern: RegExp;
  /** What the match means, completing "description …". */
  readonly means: string;
}

const READ_VERBS = String.raw`(?:read|cat|open|load|get|fetch|grab|collect|copy|upload|send|include|attach|pass|provide|print|output|share|extract|access|look at|check)`;
/** Paths and files that hold secrets; naming one next to a read verb is how poisoned tools exfiltrate. */
const SECRET_FILES = String.raw`(?:~?\/?\.ssh\b|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|(?:^|[\s'"\`(/])\.env(?:\.\w+)?\b|\.aws\/credentials|\.netrc\b|\.npmrc\b|\.pypirc\b|\.git-credentials\b|\.docker\/config\.json|\.kube\/config|\/etc\/(?:passwd|shadow)\b|\bmcp\.json\b|\.cursor\/|\bcredentials(?:\.json)?\s+file|\bprivate[ _-]?keys?\b|\bkeychain\b|\bwallet\.dat\b)`;
const SECRET_WORDS = String.raw`(?:api[ _-]?keys?|passwords?|passphrases?|secrets?|access[ _-]?tokens?|auth(?:entication)?[ _-]?tokens?|bearer tokens?|credentials|session cookies?|ssh keys?)`;

const TEXT_RULES: readonly TextRule[] = [
  {
    kind: 'instruction',
    severity: 'high',
    pattern: /\b(?:ignore|disregard|forget|override|bypass)\s+(?:(?:all|any|the|your|of|these|those|every)\s+)*(?:previous|prior|above|earlier|preceding|other|system|original|existing|safety)\s+(?:instructions?|rules|directions|guidelines|prompts?|context|messages?)\b|\b(?:ignore|disregard)\s+(?:all\s+|any\s+)?instructions\b/,
    means: 'tells the model to ignore its instructions',
  },
  {
    kind: 'instruction',
    severity: 'high',
    pattern: /\b(?:do not|don't|dont|never|must not|should not)\s+(?:ever\s+)?(?:tell|inform|mention|notify|alert|show|reveal|disclose|let on|say|report|explain)\b[^.!?\n]{0,60}\buser\b|\b(?:hide|conceal|keep)\b[^.!?\n]{0,40}\bfrom\s+the\s+user\b|\bwithout\s+(?:the\s+user\s+)?(?:telling|informing|notifying|alerting)\s+(?:the\s+)?user\b|\bwithout\s+the\s+user\s+(?:knowing|noticing)\b|\bthe\s+user\s+(?:must|should)\s+(?:not|never)\s+(?:know|see|notice|find out)\b/,
    means: 'tells the model to keep something from the user',
  },
  {
    kind: 'instruction',
    severity: 'high',
    pattern: /<\s*\/?\s*(?:important|system|instructions?|secret|hidden|admin|assistant)\s*>|\[\s*(?:important|system|instructions?)\s*\]\s*:?/,
    means: 'contains a pseudo-markup block addressed to the model',
  },
  {
    kind: 'instruction',
    severity: 'high',
    pattern: /\b(?:reveal|print|output|send|include|repeat|share|leak|ignore|override|disregard|copy|pass|append|replace|change|forget)\b[^.!?\n]{0,30}\bsystem\s+(?:prompt|message|instructions)\b|\b(?:new|updated|real|actual)\s+system\s+(?:prompt|instructions)\b/,
    means: "talks to the model about its system prompt",
  },
  {
    kind: 'instruction',
    severity: 'high',
    pattern: /\b(?:you are now|from now on,? you|act as (?:an?|the) (?:unrestricted|jailbroken|admin)|as an ai(?: assistant)?,? you must)\b/,
    means: 'tries to re-define who the model is',
  },
  {
    kind: 'secret-access',
    severity: 'high',
    pattern: new RegExp(String.raw`\b${READ_VERBS}\b[^!?\n]{0,80}${SECRET_FILES}|${SECRET_FILES}[^.!?\n]{0,60}\b(?:as|in|into|to)\s+(?:the\s+)?(?:\w+\s+)?(?:parameter|argument|field|param)\b`),
    means: 'asks to read a file that holds secrets',
  },
  {
    kind: 'secret-access',
    severity: 'high',
    pattern: new RegExp(String.raw`\b(?:pass|send|include|put|add|append|attach|provide|copy|paste|embed)\b[^.!?\n]{0,50}${SECRET_WORDS}[^.!?\n]{0,50}\b(?:as|in|into|to|via)\s+(?:the\s+|this\s+)?(?:\`?\w+\`?\s+)?(?:parameter|argument|field|param|url|query)\b`),
    means: 'asks for secrets to be passed through an argument',
  },
  {
    kind: 'secret-access',
    severity: 'medium',
    pattern: new RegExp(SECRET_FILES),
    means: 'names a file that holds secrets',
  },
  {
    kind: 'instruction',
    severity: 'high',
    pattern: /\b(?:pass|send|include|put|append|attach|embed)\b[^.!?\n]{0,40}\b(?:contents?|full text)\s+of\b[^.!?\n]{0,60}\b(?:as|in|into|to)\s+(?:the\s+)?(?:`?\w+`?\s+)?(?:parameter|argument|field|param)\b/,
    means: 'asks for file contents to be smuggled through an argument',
  },
  {
    kind: 'instruction',
    severity: 'medium',
    pattern: /\b(?:before|prior to)\s+(?:using|calling|running|invoking)\s+(?:this|any|the)\s+tool\b|\b(?:always|must|first)\s+(?:call|use|invoke|run)\s+(?:the\s+)?(?:tool\s+)?`?[\w.-]+`?\s+(?:tool\s+)?(?:first|before)\b/,
    means: 'tells the model what to do before using the tool',
  },
];

/** "call/use X first/instead": the name X is checked against the catalogue before it is flagged. */
const REDIRECT = /\b(?:call|use|invoke|prefer)\s+(?:the\s+)?(?:tool\s+)?([`'"]?)([\w.-]+)\1\s+(?:tool\s+)?(?:first|instead|beforehand)\b/g;
const NOT_A_TOOL = new Set(['this', 'it', 'that', 'them', 'these', 'those', 'one', 'a', 'an', 'with', 'caution', 'care']);

// ---------------------------------------------------------------------------------------------------
// The catalogue, for shadowing

/** The catalogue's names, indexed once so each tool is checked in time linear in its own text. */
export class CatalogueIndex {
  /** Lower-cased original name → the servers with a tool of that name. */
  private readonly byName = new Map<string, Set<string>>();
  /** Lower-cased `server_tool` / `server.tool` → server, for impersonation of a qualified name. */
  private readonly byQualified = new Map<string, { server: string; name: string }>();

  constructor(tools: readonly InspectedTool[]) {
    for (const t of tools) {
      const key = t.name.toLowerCase();
      let servers = this.byName.get(key);
      if (!servers) this.byName.set(key, (servers = new Set()));
      servers.add(t.server);
      for (const sep of ['_', '.', '-']) this.byQualified.set(`${t.server}${sep}${t.name}`.toLowerCase(), { server: t.server, name: t.name });
    }
  }

  /** Servers other than `server` that list a tool called `name` (case-insensitive). */
  otherServersWith(name: string, server: string): string[] {
    return [...(this.byName.get(name.toLowerCase()) ?? [])].filter((s) => s !== server);
  }

  hasOwn(name: string, server: string): boolean {
    return this.byName.get(name.toLowerCase())?.has(server) ?? false;
  }

  qualified(name: string): { server: string; name: string } | undefined {
    // Every qualified name joins server and tool with one of these; most words of prose have none.
    if (!QUALIFIER.test(name)) return undefined;
    return this.byQualified.get(name.toLowerCase());
  }
}

const QUALIFIER = /[_.-]/;

/** Only names that look like identifiers count as a reference in prose; "echo" or "search" are words. */
function looksLikeIdentifier(token: string): boolean {
  return token.length >= 4 && (/[_-]/.test(token.slice(1, -1)) || /[a-z][A-Z]/.test(token));
}

// ---------------------------------------------------------------------------------------------------
// Inspection

/** Every flag for one tool. `catalogue` is every server's tools (this one may be among them). */
export function inspectTool(tool: InspectedTool, catalogue: readonly InspectedTool[] | CatalogueIndex): ToolFlag[] {
  const index = catalogue instanceof CatalogueIndex ? catalogue : new CatalogueIndex(catalogue);
  const flags: ToolFlag[] = [];
  const add = (flag: ToolFlag): void => {
    if (!flags.some((f) => f.kind === flag.kind && f.reason === flag.reason)) flags.push(flag);
  };

  for (const h of findHidden(tool.name)) add({ kind: 'hidden-unicode', severity: 'high', reason: `name contains ${h.what}` });
  inspectText(tool, tool.description ?? '', 'description', LONG_DESCRIPTION_CHARS, index, add);
  for (const p of parameterTexts(tool.inputSchema)) inspectText(tool, p.text, `parameter "${p.path}"`, LONG_PARAMETER_DESCRIPTION_CHARS, index, add);

  const others = index.otherServersWith(tool.name, tool.server);
  if (others.length > 0) {
    add({ kind: 'shadowing', severity: 'medium', reason: `name "${cut(tool.name)}" is also a tool of ${others.map((s) => `"${cut(s)}"`).join(', ')}; the model may call the wrong one` });
  }
  const impersonated = index.qualified(tool.name);
  if (impersonated && impersonated.server !== tool.server) {
    add({ kind: 'shadowing', severity: 'high', reason: `name "${cut(tool.name)}" impersonates tool "${cut(impersonated.name)}" of server "${cut(impersonated.server)}"` });
  }
  return flags.sort((a, b) => SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity]);
}

const SEVERITY_ORDER: Readonly<Record<FlagSeverity, number>> = { high: 0, medium: 1, low: 2 };

function inspectText(tool: InspectedTool, raw: string, where: string, longAt: number, index: CatalogueIndex, add: (flag: ToolFlag) => void): void {
  if (!raw) return;
  for (const h of findHidden(raw)) add({ kind: 'hidden-unicode', severity: h.severity, reason: `${where} contains ${h.what}` });
  if (raw.length > longAt) {
    add({ kind: 'long-description', severity: 'medium', reason: `${where} is ${raw.length} characters (over ${longAt}); long text can bury instructions to the model` });
  }
  // Text hidden in tag characters is read too: a model may decode it.
  const texts = [normalise(raw)];
  const hidden = decodeTags(raw);
  if (hidden.trim()) texts.push(normalise(hidden));
  for (const text of texts) {
    const matched = new Set<string>();
    for (const rule of TEXT_RULES) {
      const m = rule.pattern.exec(text);
      if (!m) continue;
      // A weaker rule of the same kind adds nothing once a stronger one matched.
      if (rule.severity !== 'high' && matched.has(rule.kind)) continue;
      matched.add(rule.kind);
      add({ kind: rule.kind, severity: rule.severity, reason: `${where} ${rule.means} ("${cut(m[0])}")` });
    }
    for (const m of text.matchAll(REDIRECT)) {
      const target = m[2] ?? '';
      // Plain words ("call support first") are prose; a tool is named like an identifier or quoted.
      if (!m[1] && !looksLikeIdentifier(target)) continue;
      if (NOT_A_TOOL.has(target) || index.hasOwn(target, tool.server)) continue; // "Use read_text_file instead" of its own tool is honest.
      if (index.otherServersWith(target, tool.server).length > 0) continue; // reported below as shadowing
      add({ kind: 'instruction', severity: 'medium', reason: `${where} directs the model to another tool ("${cut(m[0])}")` });
    }
  }
  shadowingInText(tool, NOT_ASCII.test(raw) ? raw.normalize('NFKC') : raw, where, index, add);
}

/** A description that names another server's tool is the classic cross-server shadowing attack. */
function shadowingInText(tool: InspectedTool, text: string, where: string, index: CatalogueIndex, add: (flag: ToolFlag) => void): void {
  for (const m of text.matchAll(/[A-Za-z0-9][\w.-]*[A-Za-z0-9]/g)) {
    const token = m[0];
    const qualified = index.qualified(token);
    if (qualified && qualified.server !== tool.server) {
      add({ kind: 'shadowing', severity: 'high', reason: `${where} names tool "${cut(qualified.name)}" of server "${cut(qualified.server)}"` });
      continue;
    }
    if (!looksLikeIdentifier(token) || index.hasOwn(token, tool.server)) continue;
    const others = index.otherServersWith(token, tool.server);
    if (others.length > 0) add({ kind: 'shadowing', severity: 'high', reason: `${where} names tool "${cut(token)}" of server ${others.map((s) => `"${cut(s)}"`).join(', ')}` });
  }
}

/** Each parameter's description and title, with its path, walking only as far as the caps allow. */
function parameterTexts(schema: unknown): Array<{ path: string; text: string }> {
  const out: Array<{ path: string; text: string }> = [];
  const seen = new Set<object>();
  let nodes = 0;
  const walk = (node: unknown, path: string, depth: number): void => {
    if (typeof node !== 'object' || node === null || seen.has(node) || depth > MAX_SCHEMA_DEPTH || ++nodes > MAX_SCHEMA_NODES) return;
    seen.add(node);
    if (Array.isArray(node)) {
      node.forEach((n) => walk(n, path, depth + 1));
      return;
    }
    const record = node as Record<string, unknown>;
    if (path) {
      for (const key of ['description', 'title'] as const) {
        const text = record[key];
        if (typeof text === 'string') out.push({ path, text });
      }
    }
    const properties = record['properties'];
    if (typeof properties === 'object' && properties !== null && !Array.isArray(properties)) {
      for (const [name, child] of Object.entries(properties)) walk(child, path ? `${path}.${name}` : name, depth + 1);
    }
    for (const key of ['items', 'additionalProperties', 'anyOf', 'oneOf', 'allOf', 'not', '$defs', 'definitions']) {
      const child = record[key];
      if (key === '$defs' || key === 'definitions') {
        if (typeof child === 'object' && child !== null) for (const [name, def] of Object.entries(child)) walk(def, `${key}.${name}`, depth + 1);
      } else walk(child, path || key, depth + 1);
    }
  };
  walk(schema, '', 0);
  return out;
}

/** Flags for every tool of the catalogue, keyed by the caller's own key (e.g. the exposed name). */
export function inspectCatalogue<T extends InspectedTool>(tools: readonly T[], key: (tool: T) => string): Map<string, ToolFlag[]> {
  const index = new CatalogueIndex(tools);
  const result = new Map<string, ToolFlag[]>();
  for (const tool of tools) {
    const flags = inspectTool(tool, index);
    if (flags.length > 0) result.set(key(tool), flags);
  }
  return result;
}

/** Why a tool is quarantined (its high-severity flags in one line), or undefined if it is not. */
export function quarantineReason(flags: readonly ToolFlag[]): string | undefined {
  const high = flags.filter((f) => f.severity === 'high');
  if (high.length === 0) return undefined;
  return high.length === 1 ? high[0]!.reason : `${high[0]!.reason} (and ${high.length - 1} more)`;
}

/** A tool as the router exposes it (structurally a RoutedTool), so this module needs no router import. */
export interface ExposedTool {
  /** The exposed name, the key of the result. */
  readonly name: string;
  readonly server: string;
  readonly originalName: string;
  readonly originalDescription: string;
  readonly inputSchema: unknown;
}

/** Exposed name → flags, for the router's catalogue (checked under the servers' original names). */
export function inspectExposedTools(tools: readonly ExposedTool[]): Map<string, ToolFlag[]> {
  return inspectCatalogue(
    tools.map((t) => ({ name: t.originalName, server: t.server, description: t.originalDescription, inputSchema: t.inputSchema, exposed: t.name })),
    (t) => t.exposed,
  );
}

/** Exposed name → quarantine reason, for the tools with a high-severity flag. */
export function quarantineOf(flags: ReadonlyMap<string, readonly ToolFlag[]>): Map<string, string> {
  const out = new Map<string, string>();
  for (const [name, list] of flags) {
    const reason = quarantineReason(list);
    if (reason) out.set(name, reason);
  }
  return out;
}
