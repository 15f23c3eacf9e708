import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import { isRecord } from '../util/isRecord';

/**
 * A result without `resultType` is complete: 2026-07-28 says a client MUST assume so. The SDK's 2026-07-28
 * decoding refuses such a result instead (on `callTool` and the raw `request` alike, before any schema we
 * pass), and drops it, so the tool would have run for nothing. Each answer is therefore given the default
 * on its way in, before the SDK sees it; on 2025-11-25 the SDK strips the field again, so nothing changes there.
 */
export function assumeCompleteResults(transport: Transport): void {
  type Handler = NonNullable<Transport['onmessage']>;
  let handler: Handler | undefined = transport.onmessage;
  // The SDK (and its revision probe) assign onmessage after connecting; each handler assigned is wrapped.
  const wrap = (next: Handler | undefined): Handler | undefined =>
    next && (((message: JSONRPCMessage, extra?: Parameters<Handler>[1]) => next(withDefaultResultType(message), extra)) as Handler);
  handler = wrap(handler);
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    enumerable: true,
    get: () => handler,
    set: (next: Handler | undefined) => {
      handler = wrap(next);
    },
  });
}

/** The message with `resultType: "complete"` added when it is a result that names none; any other message as it is. */
export function withDefaultResultType(message: JSONRPCMessage): JSONRPCMessage {
  if (!('result' in message) || !isRecord(message.result) || 'resultType' in message.result) return message;
  return { ...message, result: { ...message.result, resultType: 'complete' } } as JSONRPCMessage;
}
