/**
 * The team's labels of general-purpose tools in the request set's catalogues (data/requests/kinds/*.json,
 * `{ "server_tool": "kind" }`), and how a written request's kinds become tools.
 *
 * A written request may list general-purpose kinds it needs without naming them ("general": ["file_write"]).
 * Each split has one general-purpose server per kind (a user has one file server, one clock), so a kind
 * becomes the first tool labelled with it on that split's general server: the labels list each server's
 * primary tool for a kind first.
 */
import fs from 'node:fs';
import path from 'node:path';
import { GENERAL_KINDS, type GeneralKind } from '../../src/core/selection/generalNeeds';
import { CATALOGUES, type CatalogueSplit } from './catalogueList';

const KINDS_DIR = path.resolve(__dirname, '..', '..', 'data', 'requests', 'kinds');

export function isGeneralKind(kind: string): kind is GeneralKind {
  return (GENERAL_KINDS as readonly string[]).includes(kind);
}

/**
 * Every label, in file order (files sorted by name). An unknown kind, or a tool labelled in two files, is an
 * error naming the files: a tool has one kind, and readers map each tool to it.
 */
export function readKindLabels(dir = KINDS_DIR): Array<{ readonly tool: string; readonly kind: GeneralKind }> {
  const out: Array<{ tool: string; kind: GeneralKind }> = [];
  if (!fs.existsSync(dir)) return out;
  const fileOf = new Map<string, string>();
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
    const labels = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as Record<string, string>;
    for (const [tool, kind] of Object.entries(labels)) {
      if (!isGeneralKind(kind)) throw new Error(`data/requests/kinds/${file}: "${tool}" has unknown kind "${kind}"; use one of ${GENERAL_KINDS.join(', ')}`);
      const earlier = fileOf.get(tool);
      if (earlier) throw new Error(`data/requests/kinds/${file}: "${tool}" is labelled in ${earlier} too; keep one label`);
      fileOf.set(tool, file);
      out.push({ tool, kind });
    }
  }
  return out;
}

/** The server of an exposed id `server_tool` (server names have no underscore). */
export function serverOfId(id: string): string {
  return id.slice(0, id.indexOf('_'));
}

/** split → kind → the tool a written kind becomes in that split. */
export function kindProviders(labels = readKindLabels()): Map<CatalogueSplit, Map<GeneralKind, string>> {
  const generalSplit = new Map<string, CatalogueSplit>();
  for (const c of CATALOGUES) if (c.kind === 'mcp' && c.general) generalSplit.set(c.server, c.split);
  const out = new Map<CatalogueSplit, Map<GeneralKind, string>>();
  for (const { tool, kind } of labels) {
    const split = generalSplit.get(serverOfId(tool));
    if (!split) continue;
    const byKind = out.get(split) ?? new Map<GeneralKind, string>();
    out.set(split, byKind);
    if (!byKind.has(kind)) byKind.set(kind, tool);
  }
  return out;
}

/** Servers that are general-purpose servers of another split than `split`: a user of `split` does not have them. */
export function otherSplitsGeneralServers(split: string): Set<string> {
  return new Set(CATALOGUES.filter((c) => c.kind === 'mcp' && c.general && c.split !== split).map((c) => c.server));
}
