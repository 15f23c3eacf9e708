/**
 * The tokenizer side of the local engine: one text in, the token ids the model expects out, cut to the
 * token limit the way the Rust tokenizer's truncation cuts.
 */
import type { Tokenizer } from '@huggingface/tokenizers';
import type { Preprocess } from './modelFolder';
import { splitIdentifiers } from './textPreprocess';

/**
 * Before tokenising, texts are cut to maxLength × this many characters. No vocabulary we run averages
 * tokens this long, so the first maxLength tokens are unchanged, and a huge description is not tokenised whole.
 */
export const MAX_CHARS_PER_TOKEN_BEFORE_CUT = 32;

/** A text after tokenising and cutting: ids (and token types when the model takes them). */
export interface EncodedText {
  readonly index: number;
  readonly ids: readonly number[];
  readonly typeIds: readonly number[] | undefined;
}

/** Tokenises one text the way the model expects, and cuts it to the limit keeping the closing special tokens. */
export class SequenceEncoder {
  /** Special tokens the post-processor puts before and after a single text ([CLS] … [SEP] for BERT). */
  private readonly prefixCount: number;
  private readonly suffixCount: number;
  private readonly maxChars: number;

  constructor(
    private readonly tokenizer: Tokenizer,
    readonly padId: number,
    private readonly maxLength: number,
    private readonly preprocess: Preprocess,
  ) {
    // Learn the template from the tokenizer itself: where a probe word's bare ids sit in its framed ids.
    const bare = tokenizer.encode('a', { add_special_tokens: false }).ids;
    const framed = tokenizer.encode('a').ids;
    const at = bare.length > 0 ? indexOfRun(framed, bare) : -1;
    this.prefixCount = at >= 0 ? at : 0;
    this.suffixCount = at >= 0 ? framed.length - at - bare.length : 0;
    this.maxChars = maxLength * MAX_CHARS_PER_TOKEN_BEFORE_CUT;
  }

  get specialCount(): number {
    return this.prefixCount + this.suffixCount;
  }

  encode(text: string, index: number, withTypes: boolean): EncodedText {
    let prepared = this.preprocess === 'split-identifiers' ? splitIdentifiers(text) : text;
    if (prepared.length > this.maxChars) prepared = prepared.slice(0, this.maxChars);
    const encoding = this.tokenizer.encode(prepared, { return_token_type_ids: withTypes });
    let ids = encoding.ids;
    let typeIds = withTypes ? encoding.token_type_ids : undefined;
    if (ids.length > this.maxLength) {
      // Keep the first tokens and the closing special tokens, as the Rust tokenizer's truncation does.
      const head = this.maxLength - this.suffixCount;
      const cut = <T>(list: readonly T[]): T[] => [...list.slice(0, head), ...list.slice(list.length - this.suffixCount)];
      ids = cut(ids);
      if (typeIds) typeIds = cut(typeIds);
    }
    return { index, ids, typeIds };
  }
}

/** The pad id: tokenizer.json's padding, else the config's pad_token, else 0 (BERT's [PAD]). */
export function padId(tokenizerJson: Record<string, unknown>, tokenizerConfig: Record<string, unknown>, tokenizer: Tokenizer): number {
  const padding = tokenizerJson['padding'];
  if (typeof padding === 'object' && padding !== null) {
    const id = (padding as Record<string, unknown>)['pad_id'];
    if (typeof id === 'number' && Number.isInteger(id) && id >= 0) return id;
  }
  const raw = tokenizerConfig['pad_token'];
  // pad_token is a string, or an AddedToken-shaped object in older exports.
  const token = typeof raw === 'string' ? raw : typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>)['content'] : undefined;
  if (typeof token === 'string') {
    const id = tokenizer.token_to_id(token);
    if (id !== undefined) return id;
  }
  return 0;
}

function indexOfRun(haystack: readonly number[], needle: readonly number[]): number {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}
