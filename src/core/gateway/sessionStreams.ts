import { AsyncLocalStorage } from 'node:async_hooks';
import type { ServerResponse } from 'node:http';
import type { EventId, EventStore, JSONRPCMessage, StreamId } from '@modelcontextprotocol/server';
import { isRecord } from '../util/isRecord';

/**
 * Resumable answer streams for 2025-11-25 sessions, and a clear end for the calls a gateway lost.
 *
 * A 2025 call's answer is an SSE stream. Each stream starts with a priming event whose id names the JSON-RPC
 * request it answers, so a client whose stream breaks reconnects with `Last-Event-ID` instead of waiting for
 * its own timeout. Back on the same gateway, the events it missed are replayed. On a gateway that does not
 * hold the session (the one that did stopped: another replica behind the proxy, or this process restarted),
 * the reconnect is answered with a JSON-RPC error for that request, so the client learns the call is lost.
 */

/** How long a client waits before reconnecting a broken stream (the SSE `retry` field). */
export const RECONNECT_MS = 500;
/** Streams one session keeps for replay; older ones are forgotten (their calls have long been answered). */
const MAX_STREAMS = 64;
/** Events one stream keeps for replay (progress notices can be many; the answer is the last). */
const MAX_EVENTS_PER_STREAM = 256;

const streamRequest = new AsyncLocalStorage<string | undefined>();

/** Runs a session's request so that the stream opened for it is named after its JSON-RPC id. */
export function withStreamRequest<T>(body: unknown, handle: () => Promise<T>): Promise<T> {
  const id = isRecord(body) && (typeof body['id'] === 'string' || typeof body['id'] === 'number') ? body['id'] : undefined;
  return streamRequest.run(id === undefined ? undefined : Buffer.from(JSON.stringify(id)).toString('base64url'), handle);
}

interface Stream {
  readonly token: string;
  readonly events: Array<{ readonly seq: number; readonly id: EventId; readonly message: JSONRPCMessage }>;
}

/** One session's events, in memory: `<request>.<stream>.<seq>` ids, bounded per stream and per session. */
export class SessionEventStore implements EventStore {
  private readonly streams = new Map<StreamId, Stream>();
  private seq = 0;

  async storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
    let stream = this.streams.get(streamId);
    if (!stream) {
      stream = { token: streamRequest.getStore() ?? '-', events: [] };
      this.streams.set(streamId, stream);
      for (const old of this.streams.keys()) {
        if (this.streams.size <= MAX_STREAMS) break;
        this.streams.delete(old);
      }
    }
    const seq = ++this.seq;
    const id = `${stream.token}.${streamId}.${seq}`;
    stream.events.push({ seq, id, message });
    if (stream.events.length > MAX_EVENTS_PER_STREAM) stream.events.shift();
    return id;
  }

  async getStreamIdForEventId(eventId: EventId): Promise<StreamId | undefined> {
    const parsed = parseEventId(eventId);
    return parsed && this.streams.has(parsed.streamId) ? parsed.streamId : undefined;
  }

  async replayEventsAfter(lastEventId: EventId, { send }: { send: (eventId: EventId, message: JSONRPCMessage) => Promise<void> }): Promise<StreamId> {
    const parsed = parseEventId(lastEventId);
    const stream = parsed && this.streams.get(parsed.streamId);
    if (!parsed || !stream) throw new Error(`No stream to resume after event "${lastEventId}".`);
    // The priming event carries no message; only real ones are sent again.
    for (const event of stream.events) if (event.seq > parsed.seq && 'jsonrpc' in event.message) await send(event.id, event.message);
    return parsed.streamId;
  }
}

/** The JSON-RPC id of the request a stream answered, from the id of its last event; undefined if it names none. */
export function lostRequestId(lastEventId: string | undefined): string | number | undefined {
  const token = lastEventId === undefined ? undefined : parseEventId(lastEventId)?.token;
  if (token === undefined || token === '-') return undefined;
  try {
    const id: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    return typeof id === 'string' || typeof id === 'number' ? id : undefined;
  } catch {
    return undefined;
  }
}

/** Answers a reconnect for a call this gateway does not hold with the JSON-RPC error that ends it. */
export function answerLostCall(res: ServerResponse, id: string | number): void {
  const error = {
    jsonrpc: '2.0',
    id,
    error: {
      code: -32000,
      message:
        'The MCP Tool Router gateway that was running this call stopped (a replica went down, or the gateway restarted), so its answer is lost and whether it ran is unknown. Start a new session; check before calling again a tool that changes things.',
    },
  };
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
  res.end(`event: message\ndata: ${JSON.stringify(error)}\n\n`);
}

function parseEventId(eventId: string): { token: string; streamId: string; seq: number } | undefined {
  const m = /^([A-Za-z0-9_-]+|-)\.([^.]+)\.(\d+)$/.exec(eventId);
  return m ? { token: m[1]!, streamId: m[2]!, seq: Number(m[3]) } : undefined;
}
