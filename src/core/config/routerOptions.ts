import { DEFAULT_ROUTER_OPTIONS, PROTOCOL_SETTINGS, describeType, type ProtocolSetting, type RouterOptions } from './serverConfig';
import { isRecord } from '../util/isRecord';

/** A server entry's `router` block: how the router treats that server (timeouts, limits, filters, OAuth). */

/** A cut result must still hold the note that says it was cut (512 bytes are reserved for it). */
export const MIN_RESPONSE_BYTES = 1024;
const KNOWN_ROUTER_FIELDS = new Set([...Object.keys(DEFAULT_ROUTER_OPTIONS), 'oauth']);

/** Writable, so the caller can still apply the entry's `disabled`. */
export type ParsedRouterOptions = { -readonly [K in keyof RouterOptions]: RouterOptions[K] };

/** The options of one server's `router` block over the defaults; each bad value is reported and skipped. */
export function parseRouterOptions(
  node: unknown,
  err: (field: string, message: string) => void,
  warn: (field: string, message: string) => void,
): ParsedRouterOptions {
  const options: ParsedRouterOptions = { ...DEFAULT_ROUTER_OPTIONS };
  if (node === undefined) return options;
  if (!isRecord(node)) {
    err('', `"router" must be an object, got ${describeType(node)}.`);
    return options;
  }
  for (const [key, value] of Object.entries(node)) {
    if (!KNOWN_ROUTER_FIELDS.has(key)) {
      warn(key, `Unknown router option "${key}" is ignored. Known: ${[...KNOWN_ROUTER_FIELDS].join(', ')}.`);
      continue;
    }
    switch (key) {
      case 'enabled':
      case 'allowUnvalidatedTools':
      case 'roots':
        if (typeof value !== 'boolean') err(key, `must be true or false, got ${describeType(value)}.`);
        else options[key] = value;
        break;
      case 'toolsAllowed':
      case 'toolsDenied':
        if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) err(key, 'must be an array of glob strings such as ["read_*"].');
        else options[key] = value as string[];
        break;
      case 'oauth': {
        if (!isRecord(value)) {
          err(key, `must be an object {"clientId", "clientSecret", "scopes"}, got ${describeType(value)}.`);
          break;
        }
        const oauth: { clientId?: string; clientSecret?: string; scopes?: string[]; clientMetadataUrl?: string } = {};
        for (const [field, v] of Object.entries(value)) {
          if (field === 'clientId' || field === 'clientSecret') {
            if (typeof v !== 'string' || v === '') err(`oauth.${field}`, `must be a non-empty string, got ${describeType(v)}.`);
            else oauth[field] = v;
          } else if (field === 'scopes') {
            if (typeof v === 'string') oauth.scopes = v.split(/\s+/).filter(Boolean);
            else if (Array.isArray(v) && v.every((x) => typeof x === 'string')) oauth.scopes = v as string[];
            else err('oauth.scopes', 'must be an array of scope names such as ["read", "write"].');
          } else if (field === 'clientMetadataUrl') {
            if (typeof v === 'string' && /^https:\/\/[^/]+\/./.test(v)) oauth.clientMetadataUrl = v;
            else err('oauth.clientMetadataUrl', 'must be an https URL with a path, where the client metadata document is published.');
          } else warn(`oauth.${field}`, `Unknown OAuth option "${field}" is ignored. Known: clientId, clientSecret, scopes, clientMetadataUrl.`);
        }
        if (oauth.clientSecret && !oauth.clientId) err('oauth.clientSecret', 'a client secret needs its "clientId".');
        options.oauth = oauth;
        break;
      }
      case 'protocol':
        if (typeof value !== 'string' || !(PROTOCOL_SETTINGS as readonly string[]).includes(value)) err(key, `must be one of ${PROTOCOL_SETTINGS.map((p) => `"${p}"`).join(', ')}, got ${JSON.stringify(value)}.`);
        else options.protocol = value as ProtocolSetting;
        break;
      case 'callTimeoutMs':
      case 'maxConcurrentCalls':
      case 'maxResponseBytes':
      case 'startupTimeoutMs': {
        const min = key === 'maxResponseBytes' ? MIN_RESPONSE_BYTES : 1;
        if (typeof value !== 'number' || !Number.isInteger(value) || value < min) err(key, `must be a whole number of at least ${min}, got ${JSON.stringify(value)}.`);
        else options[key] = value;
        break;
      }
    }
  }
  return options;
}
