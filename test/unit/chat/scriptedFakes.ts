import type { CallEnvelope } from '../../../src/core/router/callEnvelope';
import type { ChatMessage, ChatModel, ChatToolDefinition, ModelResponse, ToolCaller } from '../../../src/core/chat/chatTurn';

/**
 * A FAKE language model: it answers from a script, one entry per model request, and records what it was
 * offered. No real model can be scripted; the real participant is tested in VS Code with a registered
 * fake provider (test/extension).
 */
export class ScriptedFakeModel implements ChatModel {
  readonly requests: Array<{ tools: string[]; toolMode: string; messages: readonly ChatMessage[] }> = [];
  constructor(private readonly script: Array<ModelResponse | ((messages: readonly ChatMessage[]) => ModelResponse)>) {}
  /**
   * A step given with `parts` is written piece by piece through `onText`, as a streaming model writes
   * (each piece after a pause of one event-loop turn); `text` is then the pieces joined.
   */
  async send(messages: readonly ChatMessage[], tools: readonly ChatToolDefinition[], options: { toolMode: 'auto' | 'required'; onText?: (delta: string) => void }): Promise<ModelResponse> {
    this.requests.push({ tools: tools.map((t) => t.name), toolMode: options.toolMode, messages: [...messages] });
    const next = this.script.shift();
    if (!next) throw new Error('the script ran out');
    const response = typeof next === 'function' ? next(messages) : next;
    const parts = (response as { parts?: string[] }).parts;
    if (parts && options.onText) {
      for (const part of parts) {
        await new Promise((resolve) => setImmediate(resolve));
        options.onText(part);
      }
    }
    return parts ? { ...response, text: parts.join('') } : response;
  }
}

/** A FAKE router answering from a table, so a unit test needs no server; the real one is in the integration tests. */
export class TableFakeRouter implements ToolCaller {
  readonly calls: Array<{ name: string; args: unknown }> = [];
  constructor(private readonly answer: (name: string, args: unknown) => string) {}
  async call(name: string, args: unknown): Promise<CallEnvelope> {
    this.calls.push({ name, args });
    return { ok: true, content: [{ type: 'text', text: this.answer(name, args) }], meta: { latencyMs: 1, bytes: 10, server: 's', tool: name } };
  }
}

/** The text of the last tool result the model was sent. */
export function lastToolResult(messages: readonly ChatMessage[]): string {
  const last = [...messages].reverse().find((m) => m.role === 'tool');
  return last?.text ?? '';
}
