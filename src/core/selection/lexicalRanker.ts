/**
 * Lexical ranking of a whole tool catalogue for a request: BM25F over a tool's name, description and
 * parameters. It needs no model, explains itself (which words matched), and is the floor the embedding
 * model is fused with. The figures behind each choice are in docs/decisions.md ("Selection: lexical ranking").
 */
import { lexicalTerms, plainTerms } from './lexicalTerms';
import { NAME_ALIAS_WEIGHT, nameAliasTerms, type NameAliases } from './nameAliases';
import { toolFields, type RankableTool, type ToolFields } from './toolDocument';

/** Term-frequency saturation: the textbook values, since these barely move the ranking here. */
export const BM25_K1 = 1.2;
/** Length normalisation strength, per field. */
export const BM25_B = 0.75;

/**
 * BM25F field weights: a word in the name says more about the tool than one in a parameter's
 * description. The server's name (weight 1) catches "…in the CRM", "on notion".
 */
export const FIELD_WEIGHTS = {
  name: 3,
  description: 1,
  parameterNames: 0.3,
  parameterDescriptions: 0.3,
  enumValues: 0.5,
  server: 1,
} as const;

type FieldName = keyof typeof FIELD_WEIGHTS;
const FIELDS = Object.keys(FIELD_WEIGHTS) as FieldName[];
/** How many fields a tool's terms come in ({@link toolFieldTerms}), and where its name and description are. */
export const FIELD_COUNT = FIELDS.length;
export const NAME_FIELD = FIELDS.indexOf('name');
export const DESCRIPTION_FIELD = FIELDS.indexOf('description');

/**
 * Multi-step requests ("find the file, then email it to Bob") match each step's tools weakly when the
 * whole request is one bag of words. The best single clause's score is added at this weight, so a tool
 * that matches one step well rises without drowning tools that match the whole request.
 */
export const CLAUSE_WEIGHT = 0.5;
/**
 * Clause boundaries for lexical scoring: sentence ends, semicolons, every comma, and the words that chain
 * steps. Finer than clauses.ts's split of a request (used for the embedding and the clause heads) on
 * purpose: the coarser split ranked worse here.
 */
const CLAUSE_SPLIT = /[.;!?\n]+|,\s+|\s+(?:and then|then|and also|after that|afterwards|also)\s+/i;
/** A clause needs this many terms to be worth scoring alone; one-word fragments match noise. */
const MIN_CLAUSE_TERMS = 2;

export interface LexicalOptions {
  /** Blend the full request with its best clause (default true; always off with plainBm25). */
  readonly clauses?: boolean;
  /**
   * The published BM25 floor instead: plain BM25 (k1 1.2, b 0.75) over one field (name, description,
   * parameter names and descriptions), identifiers split, no stop words, no stemming, no clauses.
   * For comparisons only.
   */
  readonly plainBm25?: boolean;
  /** Names a prompt mentions gain their other-language forms (nameAliases.ts): the shipped dictionary by default, none with false. */
  readonly nameAliases?: NameAliases | false;
  /** Each tool's terms per field as {@link toolFieldTerms} reads them, when already read (toolReadings.ts). */
  readonly fieldTerms?: ReadonlyArray<readonly (readonly string[])[]>;
}

/** A tool's lexical terms in each BM25F field, in FIELD_WEIGHTS order. */
export function toolFieldTerms(tool: RankableTool): string[][] {
  return fieldTermsOf(toolFields(tool));
}

/** {@link toolFieldTerms} of a tool already pulled apart. */
export function fieldTermsOf(fields: ToolFields): string[][] {
  const byField: Record<FieldName, string> = {
    name: fields.name,
    description: fields.description,
    parameterNames: fields.parameterNames.join(' '),
    parameterDescriptions: fields.parameterDescriptions.join(' '),
    enumValues: fields.enumValues.join(' '),
    server: fields.server,
  };
  return FIELDS.map((f) => lexicalTerms(byField[f]));
}

/** The one field of the plain BM25 floor: name, description and parameters together. */
function plainText(fields: ToolFields): string {
  return [fields.name, fields.description, ...fields.parameterNames, ...fields.parameterDescriptions].join(' ');
}

export interface RankedTool {
  /** Position of the tool in the array given to the constructor. */
  readonly index: number;
  readonly id: string;
  readonly score: number;
}

interface Posting {
  readonly docs: Int32Array;
  /** idf × saturated weighted term frequency: a posting's whole contribution to a score. */
  readonly contributions: Float64Array;
}

export class LexicalRanker {
  private readonly postings = new Map<string, Posting>();
  private readonly ids: readonly string[];
  private readonly useClauses: boolean;
  private readonly terms: (text: string) => string[];
  private readonly nameAliases: NameAliases | false | undefined;

  constructor(tools: readonly RankableTool[], options: LexicalOptions = {}) {
    this.ids = tools.map((t) => t.id);
    const plain = options.plainBm25 ?? false;
    this.useClauses = !plain && (options.clauses ?? true);
    this.terms = plain ? plainTerms : lexicalTerms;
    this.nameAliases = plain ? false : options.nameAliases;
    const weights: readonly number[] = plain ? [1] : FIELDS.map((f) => FIELD_WEIGHTS[f]);
    const fieldCount = weights.length;
    const n = tools.length;

    // Per tool and field: its terms and the field's length.
    const fieldTerms: Array<readonly (readonly string[])[]> = [];
    const lengths = Array.from({ length: fieldCount }, () => new Float64Array(n));
    for (let d = 0; d < n; d++) {
      const terms = plain ? [plainTerms(plainText(toolFields(tools[d]!)))] : (options.fieldTerms?.[d] ?? toolFieldTerms(tools[d]!));
      for (let f = 0; f < fieldCount; f++) lengths[f]![d] = terms[f]!.length;
      fieldTerms.push(terms);
    }
    const averageLength = lengths.map((l) => {
      let s = 0;
      for (let d = 0; d < n; d++) s += l[d]!;
      return n > 0 ? Math.max(s / n, 1e-9) : 1;
    });

    // Weighted, length-normalised term frequency per (term, tool), then saturated once (BM25F). Terms are
    // numbered as they first appear, and counted in flat arrays: building this is most of selection's start-up.
    const ids = new Map<string, number>();
    const termDocs: number[][] = [];
    const termWeights: number[][] = [];
    let count = new Float64Array(1024);
    let tf = new Float64Array(1024);
    const inField: number[] = [];
    const inTool: number[] = [];
    for (let d = 0; d < n; d++) {
      for (let f = 0; f < fieldCount; f++) {
        for (const term of fieldTerms[d]![f]!) {
          let id = ids.get(term);
          if (id === undefined) {
            ids.set(term, (id = termDocs.length));
            termDocs.push([]);
            termWeights.push([]);
            if (id >= count.length) {
              count = grown(count);
              tf = grown(tf);
            }
          }
          if (count[id] === 0) inField.push(id);
          count[id]! += 1;
        }
        const norm = 1 - BM25_B + (BM25_B * lengths[f]![d]!) / averageLength[f]!;
        for (const id of inField) {
          if (tf[id] === 0) inTool.push(id);
          tf[id]! += (weights[f]! * count[id]!) / norm;
          count[id] = 0;
        }
        inField.length = 0;
      }
      for (const id of inTool) {
        termDocs[id]!.push(d);
        termWeights[id]!.push(tf[id]!);
        tf[id] = 0;
      }
      inTool.length = 0;
    }
    for (const [term, id] of ids) {
      const docs = termDocs[id]!;
      const ws = termWeights[id]!;
      const df = docs.length;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      const contributions = new Float64Array(df);
      for (let i = 0; i < df; i++) contributions[i] = (idf * ws[i]!) / (BM25_K1 + ws[i]!);
      this.postings.set(term, { docs: Int32Array.from(docs), contributions });
    }
  }

  get size(): number {
    return this.ids.length;
  }

  /** One score per tool, aligned with the constructor's array; 0 where no term matched. */
  score(query: string): Float64Array {
    const scores = new Float64Array(this.ids.length);
    this.addPrompt(query, scores);
    if (!this.useClauses) return scores;

    const clauses = requestClauses(query);
    if (clauses.length < 2) return scores;
    const best = new Float64Array(this.ids.length);
    const clauseScores = new Float64Array(this.ids.length);
    for (const clause of clauses) {
      clauseScores.fill(0);
      this.addPrompt(clause, clauseScores);
      for (let d = 0; d < best.length; d++) if (clauseScores[d]! > best[d]!) best[d] = clauseScores[d]!;
    }
    for (let d = 0; d < scores.length; d++) scores[d] = scores[d]! + CLAUSE_WEIGHT * best[d]!;
    return scores;
  }

  /** The k best tools, best first; ties keep catalogue order. Tools that matched nothing are left out. */
  rank(query: string, k: number): RankedTool[] {
    const scores = this.score(query);
    return topK(scores, k).map((index) => ({ index, id: this.ids[index]!, score: scores[index]! }));
  }

  /** A prompt's (or clause's) own terms, then the other-language forms of the names it mentions at their lower weight. */
  private addPrompt(text: string, scores: Float64Array): void {
    const terms = this.terms(text);
    this.addTerms(terms, scores, 1);
    if (this.nameAliases !== false) this.addTerms(nameAliasTerms(text, terms, this.nameAliases), scores, NAME_ALIAS_WEIGHT);
  }

  /** Each distinct query term counts once: repeating a word in a request does not make it matter more. */
  private addTerms(terms: readonly string[], scores: Float64Array, weight: number): void {
    const seen = new Set<string>();
    for (const term of terms) {
      if (seen.has(term)) continue;
      seen.add(term);
      const p = this.postings.get(term);
      if (!p) continue;
      for (let i = 0; i < p.docs.length; i++) scores[p.docs[i]!] += weight * p.contributions[i]!;
    }
  }
}

/** A copy of `a` twice as long, zeros after. */
function grown(a: Float64Array<ArrayBuffer>): Float64Array<ArrayBuffer> {
  const out = new Float64Array(a.length * 2);
  out.set(a);
  return out;
}

/**
 * The clauses of a multi-step request worth scoring alone (each with at least MIN_CLAUSE_TERMS terms),
 * or [] when the request is one step. Embedding-based ranking blends clauses the same way.
 */
export function requestClauses(query: string): string[] {
  const clauses = query.split(CLAUSE_SPLIT).filter((c) => lexicalTerms(c).length >= MIN_CLAUSE_TERMS);
  return clauses.length >= 2 ? clauses : [];
}

/** Indices of the k highest scores with score > 0, best first, ties in index order. */
export function topK(scores: ArrayLike<number>, k: number): number[] {
  const idx: number[] = [];
  for (let i = 0; i < scores.length; i++) if (scores[i]! > 0) idx.push(i);
  idx.sort((a, b) => scores[b]! - scores[a]! || a - b);
  return idx.slice(0, Math.max(0, k));
}
