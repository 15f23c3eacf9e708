/**
 * Text preparation shared by the default model's training, its tokenizer at run time, and lexical
 * ranking: tool names are identifiers (`getUserById`, `read_text_file`, `files.list`), and a model or
 * BM25 only sees their words once they are split.
 */

/** Splits camelCase, PascalCase, snake_case, kebab-case, dotted and slashed identifiers into words. */
export function splitIdentifiers(text: string): string {
  // Text without capitals has no case boundary to split (most prompts, many descriptions): skip those passes.
  const cased = HAS_CAPITAL.test(text)
    ? text
        .replace(/([a-z0-9])([A-Z])/g, '$1 $2') // getUser → get User
        .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2') // HTTPServer → HTTP Server
    : text;
  // snake_case, kebab-case, dotted.names and paths, and runs of white space, each become one space.
  return cased.replace(/[_\-./\\:\s]+/g, ' ').trim();
}

const HAS_CAPITAL = /[A-Z]/;

/** An identifier's words, lowercased: `getUserById` → get, user, by, id. */
export function identifierWords(text: string): string[] {
  return splitIdentifiers(text).toLowerCase().split(' ').filter(Boolean);
}
