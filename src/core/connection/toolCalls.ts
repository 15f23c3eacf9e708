import { SdkErrorCode, type Client, type Progress, type Tool } from '@modelcontextprotocol/client';
import * as z from 'zod/v4';
import { describeError } from '../errors/describeError';
import { isSdkError } from './connectionErrors';
import type { ServerTool } from './serverTool';

/**
 * After a remote response stream breaks, the SDK may resume it (servers with an event store); calls still
 * unanswered after this long are ended with a "connection dropped" error instead of waiting for their timeout.
 */
export const STREAM_RESUME_GRACE_MS = 2_000;

/** Results are passed on unchecked here; the router checks their shape. */
export const LooseResultSchema = z.looseObject({});

export type ToolCallResult = Record<string, unknown>;

/** A remote call in flight: its own abort, and why its stream dropped once that ended it. */
export interface RemoteCall {
  readonly controller: AbortController;
  dropped: string | undefined;
}

/** The remote calls in flight, so a dropped response stream can end the ones the server does not resume. */
export class RemoteCalls {
  private readonly calls = new Set<RemoteCall>();

  begin(): RemoteCall {
    const call: RemoteCall = { controller: new AbortController(), dropped: undefined };
    this.calls.add(call);
    return call;
  }

  end(call: RemoteCall): void {
    this.calls.delete(call);
  }

  /**
   * A remote response stream broke mid-call. The SDK resumes it when the server supports resumption;
   * otherwise the request would wait for its timeout. Calls still pending after a short grace period are
   * ended with an error that says what happened.
   */
  streamDropped(reason: string): void {
    const affected = [...this.calls];
    if (affected.length === 0) return;
    const timer = setTimeout(() => {
      for (const call of affected) {
        if (!this.calls.has(call)) continue; // answered (resumed) meanwhile
        call.dropped = reason;
        call.controller.abort(new Error(reason));
      }
    }, STREAM_RESUME_GRACE_MS);
    timer.unref?.();
  }
}

/** One tools/call as the connection sends it. */
export interface ToolCallRequest {
  readonly tool: string;
  readonly args: Record<string, unknown>;
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
  readonly onProgress?: (progress: Progress) => void;
  /** The tool as listed, when the router knows it. */
  readonly definition: ServerTool | undefined;
  /** A 2026-07-28 streamable HTTP connection: the call goes through the SDK's callTool. */
  readonly viaSdk: boolean;
}

/**
 * The tools/call request. On a 2026-07-28 HTTP connection only the SDK's callTool copies arguments marked
 * x-mcp-header into Mcp-Param-* headers. It checks the result more strictly than the router does; when it
 * refuses one, the call is made again the loose way, but only for a tool its server says is safe to repeat.
 */
export function toolCallRequest(client: Client, call: ToolCallRequest, log: (line: string) => void): () => Promise<ToolCallResult> {
  const requestOptions = {
    timeout: call.timeoutMs,
    // Progress keeps a long call alive: its timeout restarts with each notification.
    ...(call.onProgress ? { onprogress: call.onProgress, resetTimeoutOnProgress: true } : {}),
    ...(call.signal ? { signal: call.signal } : {}),
  };
  const params = { name: call.tool, arguments: call.args };
  const raw = async (): Promise<ToolCallResult> => (await client.request({ method: 'tools/call', params }, LooseResultSchema, requestOptions)) as ToolCallResult;
  if (!call.viaSdk) return raw;
  const definition = call.definition;
  return async () => {
    try {
      return (await client.callTool(params, { ...requestOptions, ...(definition ? { toolDefinition: sdkTool(definition) } : {}) })) as ToolCallResult;
    } catch (error) {
      if (!isSdkError(error, SdkErrorCode.InvalidResult) || !safeToRepeat(definition)) throw error;
      log(`[router] "${call.tool}" returned a result the SDK refused (${describeError(error)}); calling it again without that check`);
      return raw();
    }
  };
}

/** A tool as the SDK's callTool takes it: without its output schema, so results are checked as loosely on 2026-07-28 as on 2025-11-25. */
function sdkTool(tool: ServerTool): Tool {
  const { outputSchema: _outputSchema, ...rest } = tool;
  return rest as Tool; // the input schema was checked when the tools were listed
}

/** The server says the tool only reads, or that calling it again does no more: a second call is harmless. */
function safeToRepeat(tool: ServerTool | undefined): boolean {
  return tool?.annotations?.readOnlyHint === true || tool?.annotations?.idempotentHint === true;
}
