/**
 * What selection reads of each tool before any prompt: its lexical terms per field, its embedding text,
 * whether it is written in Chinese, Japanese or Korean, and how likely it is to be each general-purpose kind.
 * Reading 1,000 tools takes a few hundred milliseconds, and a catalogue is read again whenever any server's
 * list changes, mostly with the same tools. So readings are kept by each tool's content: a catalogue read
 * again reads only its new or changed tools. They can also be saved and loaded ({@link ToolReadings.save}),
 * so a start with the tools of last time reads none. Pure: the caller does any I/O.
 */
import { createHash } from 'node:crypto';
import type { GeneralNeeds } from './generalNeeds';
import { DESCRIPTION_FIELD, FIELD_COUNT, NAME_FIELD, fieldTermsOf } from './lexicalRanker';
import { isUnspaced } from './lexicalTerms';
import type { SelectableTool } from './selectionTypes';
import { embeddingTextOf, toolFields } from './toolDocument';
import { rankableFor } from './toolIndex';

export interface ToolReading {
  /** The lexical ranker's terms of each BM25F field (lexicalRanker.ts's FIELD_WEIGHTS order). */
  readonly fieldTerms: readonly (readonly string[])[];
  readonly embeddingText: string;
  /** The description is mostly in an unspaced script (lexicalTerms.ts's isUnspaced). */
  readonly unspaced: boolean;
  /** The needs model's probability of each kind (its `kinds` order); empty without a needs model. */
  readonly kinds: readonly number[];
}

/**
 * Bump when what a reading holds, or how it is read (terms, embedding text, fields), changes: saved readings
 * of another version are not used.
 */
export const TOOL_READINGS_VERSION = 1;

/**
 * A tool whose reading touches every part a reading has (identifiers, stop words, plurals, numbers, an
 * unspaced script, nested parameters, enums): its reading's digest changes with almost any change to how
 * tools are read, so saved readings of another build are not used even if the version was not bumped.
 */
const PROBE_TOOL: SelectableTool = {
  name: 'probe_getUserFilesById',
  server: 'probe-server',
  originalName: 'getUserFilesById',
  description: 'Gets the 12306 files and HTTPServer logs of a user, then 查询天气预报 for them; it is read-only.',
  inputSchema: { type: 'object', properties: { userId: { type: 'string', description: 'The user_id to look up' }, units: { type: 'string', enum: ['celsius', 'fahrenheit'] }, page: { type: 'object', properties: { pageSize: { type: 'number' } } } } },
};

/** The saved form: readings by content key, stamped with what they were read with. */
export interface SavedToolReadings {
  readonly version: number;
  /** The digest of the probe tool's reading by the build that saved them. */
  readonly reader: string;
  /** The needs model the kind probabilities came from (its digest), or '' without one. */
  readonly needs: string;
  readonly readings: Record<string, { f: string[][]; e: string; u: 0 | 1; k: number[] }>;
}

export class ToolReadings {
  private kept = new Map<string, ToolReading>();
  private readerDigest: string | undefined;

  /**
   * @param needs the needs model whose kinds are read, with a digest of its file
   * @param onFresh called after a catalogue read any tool anew (something new to save)
   */
  constructor(
    private readonly needs?: { readonly model: GeneralNeeds; readonly digest: string },
    private readonly onFresh?: () => void,
  ) {}

  /**
   * Every tool's reading, in catalogue order: kept ones as they are, the rest read now. Afterwards only this
   * catalogue's readings are kept.
   */
  read(tools: readonly SelectableTool[]): ToolReading[] {
    const next = new Map<string, ToolReading>();
    let fresh = 0;
    const out = tools.map((tool) => {
      const key = contentKey(tool);
      let reading = next.get(key) ?? this.kept.get(key);
      if (!reading) {
        reading = this.readOne(tool);
        fresh++;
      }
      next.set(key, reading);
      return reading;
    });
    this.kept = next;
    if (fresh > 0) this.onFresh?.();
    return out;
  }

  /** The kept readings in their saved form. */
  save(): SavedToolReadings {
    const readings: SavedToolReadings['readings'] = {};
    for (const [key, r] of this.kept) readings[key] = { f: r.fieldTerms.map((terms) => [...terms]), e: r.embeddingText, u: r.unspaced ? 1 : 0, k: [...r.kinds] };
    return { version: TOOL_READINGS_VERSION, reader: this.reader(), needs: this.needs?.digest ?? '', readings };
  }

  /** How this build reads: the digest of the probe tool's reading. */
  private reader(): string {
    this.readerDigest ??= createHash('sha1').update(JSON.stringify(this.readOne(PROBE_TOOL))).digest('base64url');
    return this.readerDigest;
  }

  /**
   * Keeps saved readings, if they were read the way this build reads them; returns how many were taken,
   * or why none were.
   */
  load(saved: unknown): { taken: number } | { refused: string } {
    if (!isSaved(saved)) return { refused: 'it is not a saved set of tool readings' };
    if (saved.version !== TOOL_READINGS_VERSION) return { refused: `it was written by another version of the router (readings version ${saved.version}, this one reads ${TOOL_READINGS_VERSION})` };
    if (saved.reader !== this.reader()) return { refused: 'it was read by a build of the router that reads tools differently' };
    if (saved.needs !== (this.needs?.digest ?? '')) return { refused: 'it was read with another unnamed-needs model' };
    const kinds = this.needs?.model.kinds.length ?? 0;
    let taken = 0;
    for (const [key, r] of Object.entries(saved.readings)) {
      if (!isSavedReading(r, kinds) || this.kept.has(key)) continue;
      this.kept.set(key, { fieldTerms: r.f, embeddingText: r.e, unspaced: r.u === 1, kinds: r.k });
      taken++;
    }
    return { taken };
  }

  /** Pulls the tool apart once for all its parts; each part is what its own function would give. */
  private readOne(tool: SelectableTool): ToolReading {
    const rankable = rankableFor(tool);
    const fields = toolFields(rankable);
    const fieldTerms = fieldTermsOf(fields);
    // The name field is the name split into words, and lexicalTerms splits it the same way again.
    const read = { name: fieldTerms[NAME_FIELD]!, description: fieldTerms[DESCRIPTION_FIELD]! };
    return {
      fieldTerms,
      embeddingText: embeddingTextOf(fields),
      unspaced: isUnspaced(tool.description ?? ''),
      kinds: this.needs ? [...this.needs.model.toolProbabilities(tool, read)] : [],
    };
  }
}

/**
 * What a reading depends on, digested: the names, the server, both descriptions and the schema. The router's
 * `[server]` tag is in `description`; the readings use `originalDescription` where there is one, and both
 * are in the key so nothing read from either can be stale.
 */
export function contentKey(tool: SelectableTool): string {
  return createHash('sha1')
    .update(JSON.stringify([tool.name, tool.server, tool.originalName ?? null, tool.description ?? '', tool.originalDescription ?? null, tool.inputSchema ?? null]))
    .digest('base64url');
}

function isSaved(value: unknown): value is SavedToolReadings {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Partial<SavedToolReadings>;
  return typeof v.version === 'number' && typeof v.reader === 'string' && typeof v.needs === 'string' && typeof v.readings === 'object' && v.readings !== null && !Array.isArray(v.readings);
}

function isSavedReading(r: unknown, kinds: number): r is SavedToolReadings['readings'][string] {
  if (typeof r !== 'object' || r === null) return false;
  const { f, e, u, k } = r as Record<string, unknown>;
  return (
    Array.isArray(f) &&
    f.length === FIELD_COUNT &&
    f.every((terms) => Array.isArray(terms) && terms.every((t) => typeof t === 'string')) &&
    typeof e === 'string' &&
    (u === 0 || u === 1) &&
    Array.isArray(k) &&
    k.length === kinds &&
    k.every((p) => typeof p === 'number' && p >= 0 && p <= 1)
  );
}
