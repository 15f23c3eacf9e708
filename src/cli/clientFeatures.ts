import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/client';
import { FileAuthStore } from '../core/auth/fileAuthStore';
import { flatFields, parseFieldValue } from '../core/schema/schemaForms';
import { RouterOAuthProvider, type AuthorizationUi } from '../core/auth/oauthProvider';
import type { ClientFeatures } from '../core/connection/clientFeatures';

/**
 * What the CLI's client offers servers: OAuth sign-in (a loopback redirect, the authorization page opened
 * with `--browser CMD` or the system's opener, tokens in a private file under the cache folder),
 * elicitation by `--elicitation ask|accept-defaults|decline`, and the folders the user gave as roots
 * (`--root`, or `router.roots` in the config): none by default, since a server such as the filesystem
 * server replaces its configured folders with the roots it is told.
 * Sampling is declared but declined: the CLI has no model to run it on. It is declared so that `serve`
 * can pass a server's sampling request on to its own client when that client offers sampling; without
 * one, the server gets an error saying the request was declined.
 */

export type ElicitationMode = 'ask' | 'accept-defaults' | 'decline';

export interface CliFeatureOptions {
  /** The folder the OAuth store lives in (beside the embedding cache). */
  readonly cacheDir: string;
  /** Command that opens the authorization URL (the URL is its last argument); the system opener by default. */
  readonly browser?: string;
  readonly elicitation: ElicitationMode;
  /** Absolute folders to announce as roots; empty: the roots capability is not declared at all. */
  readonly roots: readonly string[];
  /** Where sign-in and elicitation talk to the user (stderr: stdout carries results or the protocol). */
  readonly say: (line: string) => void;
}

/** `ask` when a person is at the terminal, `decline` otherwise (an unattended run must not hang on a question). */
export function defaultElicitationMode(): ElicitationMode {
  return process.stdin.isTTY && process.stderr.isTTY ? 'ask' : 'decline';
}

export function parseElicitationMode(value: string): ElicitationMode {
  if (value === 'ask' || value === 'accept-defaults' || value === 'decline') return value;
  throw new Error(`--elicitation must be ask, accept-defaults or decline; got "${value}".`);
}

export function cliClientFeatures(opts: CliFeatureOptions): ClientFeatures {
  const store = new FileAuthStore(path.join(opts.cacheDir, 'oauth'));
  const ui: AuthorizationUi = {
    open: async (url) => {
      // The URL carries no secret (PKCE keeps the verifier here), so it may be printed for a manual open.
      opts.say(`Sign in to continue: ${url.href}`);
      await openUrl(url.href, opts.browser);
    },
  };
  return {
    auth: (definition) => {
      if (definition.launch.type === 'stdio') return undefined;
      return new RouterOAuthProvider(definition.name, definition.launch.url, definition.options.oauth, store, ui);
    },
    elicit: (server, params) => elicit(server, params, opts),
    sample: (server) => Promise.reject(new Error(`mcp-tool-router (CLI) has no language model, so the sampling request of "${server}" was declined.`)),
    ...(opts.roots.length > 0 ? { roots: () => opts.roots.map((dir) => ({ uri: pathToFileURL(dir).href, name: path.basename(dir) })) } : {}),
  };
}

/** Runs `command URL` (split on spaces; no shell), or the platform's opener; does not wait for a browser to close. */
function openUrl(url: string, command: string | undefined): Promise<void> {
  const [file, ...args] = command
    ? [...command.trim().split(/\s+/), url]
    : process.platform === 'darwin'
      ? ['open', url]
      : process.platform === 'win32'
        ? ['cmd', '/c', 'start', '""', url]
        : ['xdg-open', url];
  return new Promise((resolve) => {
    const child = spawn(file!, args, { stdio: 'ignore', detached: command === undefined });
    child.on('error', () => resolve());
    if (command === undefined) {
      child.unref();
      resolve();
    } else child.on('exit', () => resolve());
  });
}

async function elicit(server: string, params: ElicitRequest['params'], opts: CliFeatureOptions): Promise<ElicitResult> {
  if (opts.elicitation === 'decline') return { action: 'decline' };
  // The SDK fills omitted fields with the schema's defaults (applyDefaults): accepting nothing takes them all.
  // A URL-mode request would have the CLI send the user to a page the server chose: declined.
  if (params.mode === 'url') return { action: 'decline' };
  if (opts.elicitation === 'accept-defaults') return { action: 'accept', content: {} };
  // The same reading of the requested schema as VS Code's forms (schemaForms.ts); elicitation schemas are flat.
  const fields = flatFields((params as { requestedSchema?: unknown }).requestedSchema) ?? [];
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  const question = (q: string): Promise<string> => new Promise((resolve) => rl.question(q, resolve));
  try {
    opts.say(`Server "${server}" asks: ${params.message}`);
    const content: Record<string, unknown> = {};
    for (const field of fields) {
      const choices = field.options?.map(String);
      const label = `${field.title ?? field.name}${choices ? ` (${choices.join(' / ')})` : ''}${field.defaultValue !== undefined ? ` [${String(field.defaultValue)}]` : ''}${field.required ? ' *' : ''}: `;
      for (;;) {
        const answer = (await question(label)).trim();
        if (answer === '') break; // omitted: the default, if any, is filled in
        // On a terminal y/yes/n/no (any case) answer a yes-or-no question too.
        const typed = field.kind !== 'boolean' ? answer : /^(y|yes|true)$/i.test(answer) ? 'true' : /^(n|no|false)$/i.test(answer) ? 'false' : answer;
        const parsed = field.kind === 'enum' && !choices?.includes(typed) ? `"${answer}" is not one of ${choices?.join(', ')}` : parseFieldValue(field, typed);
        if (typeof parsed === 'string') {
          opts.say(`  ${parsed}; try again, or leave it empty.`);
          continue;
        }
        content[field.name] = parsed.value;
        break;
      }
    }
    const send = (await question('Send these values? [y = send, n = decline, c = cancel] ')).trim().toLowerCase();
    if (send === 'y' || send === 'yes') return { action: 'accept', content: content as ElicitResult['content'] };
    return { action: send === 'n' || send === 'no' ? 'decline' : 'cancel' };
  } finally {
    rl.close();
  }
}
