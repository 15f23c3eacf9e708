/**
 * The token estimate for when no tokenizer is at hand (a model without `countTokens`, tool definitions
 * before any model is chosen): one token per four characters, close for English text and JSON with the
 * common tokenizers.
 */
export const CHARS_PER_TOKEN = 4;

export function estimateTokens(text: string | undefined): number {
  if (!text) return 0;
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}
