/**
 * Parses a dotenv-style file for a server's `envFile`: `KEY=VALUE` lines, `#` comments, optional
 * `export ` prefix, and single- or double-quoted values (double quotes understand \n escapes).
 * Lines that fit none of these are reported by number, never with their content, as they may hold secrets.
 */
export interface ParsedEnvFile {
  readonly values: Record<string, string>;
  /** 1-based line numbers that were not understood. */
  readonly badLines: number[];
}

const ENV_LINE = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*?)\s*$/;

export function parseEnvFile(text: string): ParsedEnvFile {
  const values: Record<string, string> = {};
  const badLines: number[] = [];
  text.split(/\r?\n/).forEach((line, index) => {
    if (line.trim() === '' || line.trimStart().startsWith('#')) return;
    const match = ENV_LINE.exec(line);
    if (!match) {
      badLines.push(index + 1);
      return;
    }
    const key = match[1]!;
    let value = match[2] ?? '';
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
      value = value.slice(1, -1).replace(/\\n/g, '\n').replace(/\\"/g, '"');
    } else if (value.length >= 2 && value.startsWith("'") && value.endsWith("'")) {
      value = value.slice(1, -1);
    } else {
      const hash = value.indexOf(' #');
      if (hash >= 0) value = value.slice(0, hash).trimEnd();
    }
    Object.defineProperty(values, key, { value, enumerable: true, writable: true, configurable: true });
  });
  return { values, badLines };
}
