import { CompleteResultSchema, GetPromptResultSchema, ReadResourceResultSchema } from '@modelcontextprotocol/core';
import { ProtocolErrorCode, type CompleteResult, type GetPromptResult, type ReadResourceResult, type Server } from '@modelcontextprotocol/server';
import type * as z from 'zod/v4';
import type { Connection } from '../connection/serverConnection';
import type { ForwardedMethod } from '../connection/serverNotices';
import { forwardedError, gatewayError } from './featureDirectory';
import type { GatewayHub, GatewaySession } from './gatewayHub';

/**
 * The gateway's resources, prompts and completions for one session: each request is routed through the
 * hub's directory to the server it belongs to, sent with the server's own names, and its answer checked
 * before it reaches the client. Lists walk the servers in configuration order, a server page at a time.
 */

export interface FeatureHandlerOptions {
  /** How long a first list waits for servers that are still starting. */
  readonly startupWaitMs: number;
}

/** What a forwarded request needs of the handler's context: the client's cancellation. */
type Context = { readonly mcpReq: { readonly signal: AbortSignal } };

/**
 * Registers the handlers on `server`. `session` is undefined for a 2026-07-28 request, which has no session
 * to hold a subscription (that revision has no resources/subscribe).
 */
export function registerFeatureHandlers(server: Server, hub: GatewayHub, session: GatewaySession | undefined, options: FeatureHandlerOptions): void {
  const directory = hub.directory;
  const firstPageWaits = async (cursor: string | undefined): Promise<void> => {
    if (cursor === undefined) await hub.whenStarted(options.startupWaitMs);
  };

  server.setRequestHandler('resources/list', async (request, ctx) => {
    await firstPageWaits(request.params?.cursor);
    const page = await directory.listPage('resources', request.params?.cursor, ctx.mcpReq.signal);
    return { resources: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
  });
  server.setRequestHandler('resources/templates/list', async (request, ctx) => {
    await firstPageWaits(request.params?.cursor);
    const page = await directory.listPage('resourceTemplates', request.params?.cursor, ctx.mcpReq.signal);
    return { resourceTemplates: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
  });
  server.setRequestHandler('resources/read', async (request, ctx) => {
    const { uri } = request.params;
    const connection = await directory.resourceOwner(uri, ctx.mcpReq.signal);
    return forward(connection, 'resources/read', { uri }, ReadResourceResultSchema, ctx) as Promise<ReadResourceResult>;
  });
  if (session) {
    server.setRequestHandler('resources/subscribe', async (request, ctx) => {
      await hub.subscribe(session, request.params.uri, ctx.mcpReq.signal);
      return {};
    });
    server.setRequestHandler('resources/unsubscribe', async (request) => {
      await hub.unsubscribe(session, request.params.uri);
      return {};
    });
  }

  server.setRequestHandler('prompts/list', async (request, ctx) => {
    await firstPageWaits(request.params?.cursor);
    const page = await directory.listPage('prompts', request.params?.cursor, ctx.mcpReq.signal);
    return { prompts: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
  });
  server.setRequestHandler('prompts/get', async (request, ctx) => {
    const target = await directory.prompt(request.params.name, ctx.mcpReq.signal);
    const params = { name: target.name, ...(request.params.arguments ? { arguments: request.params.arguments } : {}) };
    return forward(target.connection, 'prompts/get', params, GetPromptResultSchema, ctx) as Promise<GetPromptResult>;
  });

  server.setRequestHandler('completion/complete', async (request, ctx) => {
    const { ref, argument, context } = request.params;
    let connection: Connection;
    let mapped: Record<string, unknown> = { ...ref };
    if (ref.type === 'ref/prompt') {
      const target = await directory.prompt(ref.name, ctx.mcpReq.signal);
      connection = target.connection;
      mapped = { ...ref, name: target.name };
    } else {
      connection = await directory.templateOrResourceOwner(ref.uri, ctx.mcpReq.signal);
    }
    // The gateway declares completions for every server; one that offers none simply has no suggestions.
    if (connection.serverCapabilities?.completions === undefined) return { completion: { values: [], hasMore: false } };
    const params = { ref: mapped, argument, ...(context ? { context } : {}) };
    return forward(connection, 'completion/complete', params, CompleteResultSchema, ctx) as Promise<CompleteResult>;
  });
}

/** Sends a request to its server and checks the answer: a malformed one is an error, never passed on. */
async function forward(connection: Connection, method: ForwardedMethod, params: Record<string, unknown>, schema: z.ZodType, ctx: Context): Promise<Record<string, unknown>> {
  let result: Record<string, unknown>;
  try {
    result = await connection.request(method, params, { timeoutMs: connection.definition.options.callTimeoutMs, signal: ctx.mcpReq.signal });
  } catch (error) {
    throw forwardedError(connection.name, error);
  }
  const checked = schema.safeParse(result);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    throw gatewayError(ProtocolErrorCode.InternalError, `Server "${connection.name}" answered ${method} with an invalid result${issue ? ` (${issue.path.join('/') || 'result'}: ${issue.message})` : ''}; ask the server's author to fix it.`);
  }
  return result;
}
