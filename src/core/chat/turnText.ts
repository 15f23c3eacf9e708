import type { CallEnvelope, CallError } from '../router/callEnvelope';

/** Calls and results as text: what the model reads of them, and what a turn counts in tokens. */

/**
 * A model's tool-call input as text, for counting tokens. Absurdly deep input would overflow the stack
 * here before the router refuses it (INVALID_ARGUMENTS); it is then counted as nothing.
 */
export function inputText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}

export function shorten(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export function parseJsonObject(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** A call the router did not run (declined or refused); the message tells the model what happened. */
export function notRunEnvelope(name: string, message: string): CallEnvelope {
  return notRunWith(name, { type: 'CANCELLED', message, retryable: false });
}

/** A call the turn did not run, answered with `error` (the router's own, for a name no server lists). */
export function notRunWith(name: string, error: CallError): CallEnvelope {
  return { ok: false, error, meta: { latencyMs: 0, bytes: 0, server: '', tool: name, exposedName: name } };
}

/** What the model reads of a result: the content's text, or the error message with its type. */
export function envelopeText(envelope: CallEnvelope): string {
  const text = (envelope.content ?? [])
    .map((b) => (b.type === 'text' ? String(b['text']) : `[${b.type} content]`))
    .join('\n');
  if (envelope.ok) return text || '(the tool returned no content)';
  return `${envelope.error.type}: ${envelope.error.message}${text && envelope.error.type === 'TOOL_ERROR' ? '' : text ? `\n${text}` : ''}`;
}
