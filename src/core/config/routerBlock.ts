import * as path from 'node:path';
import { destructivePolicyFrom, type DestructivePolicy } from '../policy/callPolicy';
import { isRecord } from '../util/isRecord';
import type { ConfigIssue } from './serverConfig';

/**
 * The optional top-level `router` block of a config file the CLI reads: the same choices its flags make,
 * written down once. VS Code takes these from its settings instead.
 *
 *   "router": { "destructiveTools": "confirm", "allowedDestructiveTools": ["memory_delete_entities"], "roots": ["./project"] }
 */
export interface RouterBlock {
  readonly destructiveTools?: DestructivePolicy;
  readonly allowedDestructiveTools?: readonly string[];
  /** Absolute folders announced to servers as roots (relative ones are taken from the config's folder). */
  readonly roots?: readonly string[];
}

const KNOWN_FIELDS = ['destructiveTools', 'allowedDestructiveTools', 'roots'];

/** The block, checked; every problem is an issue naming the field, and a bad field is left out. */
export function parseRouterBlock(node: unknown, file: string, issues: ConfigIssue[]): RouterBlock | undefined {
  if (node === undefined) return undefined;
  const err = (field: string, message: string): void => void issues.push({ file, field: `router.${field}`, severity: 'error', message });
  if (!isRecord(node)) {
    issues.push({ file, field: 'router', severity: 'error', message: '"router" must be an object such as {"destructiveTools": "confirm"}.' });
    return undefined;
  }
  const block: { destructiveTools?: DestructivePolicy; allowedDestructiveTools?: string[]; roots?: string[] } = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'destructiveTools') {
      const policy = typeof value === 'string' ? destructivePolicyFrom(value) : undefined;
      if (policy) block.destructiveTools = policy;
      else err(key, `must be "confirm", "never" or "always", got ${JSON.stringify(value)?.slice(0, 40)}.`);
    } else if (key === 'allowedDestructiveTools' || key === 'roots') {
      if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || v === '')) {
        err(key, key === 'roots' ? 'must be an array of folder paths such as ["./project"].' : 'must be an array of tool names such as ["memory_delete_entities"].');
      } else if (key === 'roots') block.roots = (value as string[]).map((dir) => path.resolve(path.dirname(file), dir));
      else block.allowedDestructiveTools = value as string[];
    } else {
      issues.push({ file, field: `router.${key}`, severity: 'warning', message: `Unknown option "${key}" is ignored. Known: ${KNOWN_FIELDS.join(', ')}.` });
    }
  }
  return block;
}
