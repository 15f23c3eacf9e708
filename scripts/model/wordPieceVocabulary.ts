/**
 * The default model's tokenizer: a standard WordPiece `tokenizer.json` (BERT normaliser with
 * lowercasing, BERT pre-tokenizer, no [CLS]/[SEP]) so that any ONNX sentence-embedding runtime can
 * load the model. Its vocabulary is frequent whole words plus subword pieces: word-initial pieces and
 * `##` continuation pieces for frequent character n-grams, and every single character, so that no word
 * is unknown and unseen words (`weread`, `geocode`) still share pieces with words seen in training.
 * This stands in for the character n-grams an earlier prototype of the project used.
 */
import { BertNormalizer, BertPreTokenizer } from '@huggingface/tokenizers';
import { splitIdentifiers } from '../../src/core/embedding/textPreprocess';

export const PAD_TOKEN = '[PAD]';
const HAN = /^\p{Script=Han}$/u;
export const UNK_TOKEN = '[UNK]';
export const CONTINUATION_PREFIX = '##';

export interface VocabularyOptions {
  /** Whole words seen at least this often (in distinct texts) get their own token. */
  readonly minWordCount: number;
  readonly maxWords: number;
  readonly maxPrefixPieces: number;
  readonly maxContinuationPieces: number;
  /** Longest subword piece, in characters. */
  readonly maxPieceLength: number;
}

const NORMALIZER_CONFIG = { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true };

const normalizer = new BertNormalizer(NORMALIZER_CONFIG as never);
const preTokenizer = new BertPreTokenizer();

/** The words the tokenizer will see for a text: identifiers split (as at run time), normalised, pre-tokenised. */
export function preTokenize(text: string): string[] {
  return preTokenizer.pre_tokenize_text(normalizer.normalize(splitIdentifiers(text)), {} as never);
}

/** Characters that are punctuation or symbols to the BERT pre-tokenizer: always tokens of their own. */
export function isPunctuationToken(token: string): boolean {
  return /^[\p{P}\p{S}]$/u.test(token) || /^[\u0021-\u002f\u003a-\u0040\u005b-\u0060\u007b-\u007e]$/.test(token);
}

/**
 * Builds the vocabulary, special tokens first ([PAD] = 0, [UNK] = 1), then single characters, whole
 * words by frequency, and subword pieces by how many distinct words they occur in (weighted by the
 * square root of each word's frequency, so productive pieces like `##ing` beat one frequent word's chunk).
 */
export function buildVocabulary(texts: Iterable<string>, options: VocabularyOptions): string[] {
  const wordCounts = new Map<string, number>();
  for (const text of texts) {
    for (const word of new Set(preTokenize(text))) wordCounts.set(word, (wordCounts.get(word) ?? 0) + 1);
  }
  const vocab: string[] = [PAD_TOKEN, UNK_TOKEN];
  const has = new Set(vocab);
  const add = (token: string): void => {
    if (!has.has(token)) {
      has.add(token);
      vocab.push(token);
    }
  };

  const chars = new Map<string, number>();
  for (const [word, c] of wordCounts) for (const ch of word) chars.set(ch, (chars.get(ch) ?? 0) + c);
  // Printable ASCII always, so that code-like text never meets [UNK]; other characters if seen twice.
  for (let cp = 0x21; cp <= 0x7e; cp++) chars.set(String.fromCharCode(cp), Infinity);
  const singles = [...chars].filter(([, c]) => c >= 2).map(([ch]) => ch).sort();
  for (const ch of singles) add(ch);
  // Chinese characters are words of their own to the BERT pre-tokenizer, so a `##` copy would never be used.
  for (const ch of singles) if (!isPunctuationToken(ch) && !HAN.test(ch)) add(CONTINUATION_PREFIX + ch);

  const words = [...wordCounts]
    .filter(([w, c]) => c >= options.minWordCount && [...w].length > 1 && [...w].length <= 100)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, options.maxWords);
  for (const [w] of words) add(w);

  const prefixScore = new Map<string, number>();
  const continuationScore = new Map<string, number>();
  for (const [word, c] of wordCounts) {
    const ch = [...word];
    if (ch.length < 3 || ch.some((x) => isPunctuationToken(x))) continue;
    const weight = Math.sqrt(c);
    for (let k = 2; k < ch.length && k <= options.maxPieceLength; k++) {
      const p = ch.slice(0, k).join('');
      prefixScore.set(p, (prefixScore.get(p) ?? 0) + weight);
    }
    for (let i = 1; i < ch.length; i++) {
      for (let j = i + 2; j <= ch.length && j - i <= options.maxPieceLength; j++) {
        const p = CONTINUATION_PREFIX + ch.slice(i, j).join('');
        continuationScore.set(p, (continuationScore.get(p) ?? 0) + weight);
      }
    }
  }
  const top = (scores: Map<string, number>, n: number): string[] =>
    [...scores]
      .filter(([p]) => !has.has(p))
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, n)
      .map(([p]) => p);
  for (const p of top(prefixScore, options.maxPrefixPieces)) add(p);
  for (const p of top(continuationScore, options.maxContinuationPieces)) add(p);
  return vocab;
}

/** A `tokenizer.json` in the Hugging Face `tokenizers` format; no post-processor, so no [CLS]/[SEP]. */
export function tokenizerJson(vocab: readonly string[]): Record<string, unknown> {
  const special = (content: string, id: number): Record<string, unknown> => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [special(PAD_TOKEN, 0), special(UNK_TOKEN, 1)],
    normalizer: NORMALIZER_CONFIG,
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: null,
    decoder: { type: 'WordPiece', prefix: CONTINUATION_PREFIX, cleanup: true },
    model: {
      type: 'WordPiece',
      unk_token: UNK_TOKEN,
      continuing_subword_prefix: CONTINUATION_PREFIX,
      max_input_chars_per_word: 100,
      vocab: Object.fromEntries(vocab.map((t, i) => [t, i])),
    },
  };
}

export function tokenizerConfig(maxLength: number): Record<string, unknown> {
  return {
    tokenizer_class: 'PreTrainedTokenizerFast',
    do_lower_case: true,
    model_max_length: maxLength,
    pad_token: PAD_TOKEN,
    unk_token: UNK_TOKEN,
    clean_up_tokenization_spaces: true,
  };
}
