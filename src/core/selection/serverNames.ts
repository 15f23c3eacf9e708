/**
 * Servers a text names: "post it in the chatwork room", "submit the sitemap in search console", "the ATS".
 * A server is named when the text has its id as a word, case aside, also when written apart ("search
 * console" for `searchconsole`, "cloud-dns" for `clouddns`) or with a plural s; the words "mcp" and
 * "server" in an id ("mcp-server-chatwork") are not part of its name. Pure: no I/O.
 */

/** Ids shorter than this name no server: two letters occur inside too many texts. */
export const MIN_SERVER_NAME = 3;

/** A name ending in s is also matched without it only when it is longer than this. */
const MIN_SINGULAR = 4;

/** The words of a server id that are not its name. */
const NOT_NAME = /^(?:mcp|server)$/;

/** The name a server id is written as in prompts ("mcp-server-chatwork" → "chatwork"), or undefined if none is left. */
export function serverName(id: string): string | undefined {
  const name = id
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w && !NOT_NAME.test(w))
    .join('');
  return [...name].length >= MIN_SERVER_NAME ? name : undefined;
}

/** Finds the servers a text names, among a catalogue's servers (numbered as `serverIdsOf` numbers them). */
export class ServerNames {
  private readonly patterns: Array<{ server: number; pattern: RegExp }> = [];
  private readonly plain = new Set<number>();

  /**
   * @param servers each server's id, by its number
   * @param isWord whether a name is also an ordinary word ("memory", "notion"); without it, every name is taken as one
   */
  constructor(servers: readonly string[], isWord?: (word: string) => boolean) {
    servers.forEach((id, server) => {
      const name = serverName(id);
      if (!name) return;
      if (!isWord || isWord(name)) this.plain.add(server);
      // Any of its letters may be split by a space or a hyphen; a trailing s may be there or not.
      const chars = [...name].map((c) => c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
      const body = chars.join('[\\s_-]?');
      // A name ending in s may be written without it ("form" for `forms`), when what is left is not too short to tell.
      const plural = name.endsWith('s') ? (chars.length > MIN_SINGULAR ? '?' : '') : 's?';
      // Bounded by what is not a letter of its own script: "ATSから" names `ats`, "cats" does not.
      this.patterns.push({ server, pattern: new RegExp(`(?<![\\p{Script=Latin}\\p{N}])${body}${plural}(?![\\p{Script=Latin}\\p{N}])`, 'iu') });
    });
  }

  /**
   * Whether the server's name is also an ordinary word, so a text may use it without meaning the server
   * ("list everything it imports"); a made-up name ("freee", "chatwork") is not.
   */
  isPlainWord(server: number): boolean {
    return this.plain.has(server);
  }

  /** The numbers of the servers `text` names. */
  named(text: string): Set<number> {
    const out = new Set<number>();
    for (const { server, pattern } of this.patterns) if (pattern.test(text)) out.add(server);
    return out;
  }
}
