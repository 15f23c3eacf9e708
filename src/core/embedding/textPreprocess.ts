/**
 * Text preparation shared by the default model's training, its tokenizer at run time, and lexical
 * ranking: tool names are identifiers (`getUserById`, `read_text_file`, `files.list`), and a model or
 * BM25 only sees their words once they are split.
 */

/** Splits camelCase, PascalCase, snake_case, kebab-case, dotted and slashed identifiers into words. */
export function splitIdentifiers(text: string): string {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2') // getUser → get User
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2') // HTTPServer → HTTP Server
    .replace(/[_\-./\\:]+/g, ' ') // snake_case, kebab-case, dotted.names, paths
    .replace(/\s+/g, ' ')
    .trim();
}

/** An identifier's words, lowercased: `getUserById` → get, user, by, id. */
export function identifierWords(text: string): string[] {
  return splitIdentifiers(text).toLowerCase().split(' ').filter(Boolean);
}
