import type { Client, LoggingMessageNotification } from '@modelcontextprotocol/client';

/**
 * What a server offers besides tools, as the gateway passes it on: the requests forwarded to it as they
 * came from the gateway's client, and the notifications it sends back (its lists changed, a subscribed
 * resource changed, a log message). Tools have their own path (the router's catalogue and call pipeline).
 */

/** The requests the gateway forwards to a server verbatim (after mapping names and cursors back). */
export type ForwardedMethod =
  | 'resources/list'
  | 'resources/templates/list'
  | 'resources/read'
  | 'resources/subscribe'
  | 'resources/unsubscribe'
  | 'prompts/list'
  | 'prompts/get'
  | 'completion/complete'
  | 'logging/setLevel';

export interface ForwardOptions {
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}

/** A server's notification, other than tools/list_changed (which the connection handles itself). */
export type ServerNotice =
  | { readonly kind: 'resourceUpdated'; readonly uri: string }
  | { readonly kind: 'resourcesChanged' }
  | { readonly kind: 'promptsChanged' }
  | { readonly kind: 'log'; readonly params: LoggingMessageNotification['params'] };

/**
 * Turns the server's notifications into notices. `current` is false once the connection was replaced, so
 * a dying one cannot speak for the server; `redact` hides the configuration's secrets in log messages.
 */
export function installNoticeHandlers(client: Client, emit: (notice: ServerNotice) => void, current: () => boolean, redact: (text: string) => string): void {
  const on = (notice: ServerNotice): void => {
    if (current()) emit(notice);
  };
  client.setNotificationHandler('notifications/resources/updated', (n) => on({ kind: 'resourceUpdated', uri: n.params.uri }));
  client.setNotificationHandler('notifications/resources/list_changed', () => on({ kind: 'resourcesChanged' }));
  client.setNotificationHandler('notifications/prompts/list_changed', () => on({ kind: 'promptsChanged' }));
  client.setNotificationHandler('notifications/message', (n) => on({ kind: 'log', params: { ...n.params, data: redactData(n.params.data, redact) } }));
}

/** A log message's data with secrets hidden: strings directly, anything else through its JSON. */
function redactData(data: unknown, redact: (text: string) => string): unknown {
  if (typeof data === 'string') return redact(data);
  const text = JSON.stringify(data);
  if (text === undefined) return data;
  const hidden = redact(text);
  if (hidden === text) return data;
  try {
    return JSON.parse(hidden) as unknown;
  } catch {
    return hidden; // a secret that spanned JSON syntax: the text, still without it
  }
}
