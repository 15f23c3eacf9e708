import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CompleteRequestSchema,
  CompleteResultSchema,
  ErrorCode,
  GetPromptRequestSchema,
  GetPromptResultSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ReadResourceRequestSchema,
  ReadResourceResultSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type CompleteResult,
  type GetPromptResult,
  type ReadResourceResult,
} from '@modelcontextprotocol/sdk/types.js';
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

type Extra = { readonly signal: AbortSignal };

export function registerFeatureHandlers(server: Server, hub: GatewayHub, session: GatewaySession, options: FeatureHandlerOptions): void {
  const directory = hub.directory;
  const firstPageWaits = async (cursor: string | undefined): Promise<void> => {
    if (cursor === undefined) await hub.whenStarted(options.startupWaitMs);
  };

  server.setRequestHandler(ListResourcesRequestSchema, async (request, extra) => {
    await firstPageWaits(request.params?.cursor);
    const page = await directory.listPage('resources', request.params?.cursor, extra.signal);
    return { resources: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
  });
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async (request, extra) => {
    await firstPageWaits(request.params?.cursor);
    const page = await directory.listPage('resourceTemplates', request.params?.cursor, extra.signal);
    return { resourceTemplates: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
  });
  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    const { uri } = request.params;
    const connection = await directory.resourceOwner(uri, extra.signal);
    return forward(connection, 'resources/read', { uri }, ReadResourceResultSchema, extra) as Promise<ReadResourceResult>;
  });
  server.setRequestHandler(SubscribeRequestSchema, async (request, extra) => {
    await hub.subscribe(session, request.params.uri, extra.signal);
    return {};
  });
  server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
    await hub.unsubscribe(session, request.params.uri);
    return {};
  });

  server.setRequestHandler(ListPromptsRequestSchema, async (request, extra) => {
    await firstPageWaits(request.params?.cursor);
    const page = await directory.listPage('prompts', request.params?.cursor, extra.signal);
    return { prompts: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
  });
  server.setRequestHandler(GetPromptRequestSchema, async (request, extra) => {
    const target = await directory.prompt(request.params.name, extra.signal);
    const params = { name: target.name, ...(request.params.arguments ? { arguments: request.params.arguments } : {}) };
    return forward(target.connection, 'prompts/get', params, GetPromptResultSchema, extra) as Promise<GetPromptResult>;
  });

  server.setRequestHandler(CompleteRequestSchema, async (request, extra) => {
    const { ref, argument, context } = request.params;
    let connection: Connection;
    let mapped: Record<string, unknown> = { ...ref };
    if (ref.type === 'ref/prompt') {
      const target = await directory.prompt(ref.name, extra.signal);
      connection = target.connection;
      mapped = { ...ref, name: target.name };
    } else {
      connection = await directory.templateOrResourceOwner(ref.uri, extra.signal);
    }
    // The gateway declares completions for every server; one that offers none simply has no suggestions.
    if (connection.serverCapabilities?.completions === undefined) return { completion: { values: [], hasMore: false } };
    const params = { ref: mapped, argument, ...(context ? { context } : {}) };
    return forward(connection, 'completion/complete', params, CompleteResultSchema, extra) as Promise<CompleteResult>;
  });
}

/** Sends a request to its server and checks the answer: a malformed one is an error, never passed on. */
async function forward(connection: Connection, method: ForwardedMethod, params: Record<string, unknown>, schema: z.ZodType, extra: Extra): Promise<Record<string, unknown>> {
  let result: Record<string, unknown>;
  try {
    result = await connection.request(method, params, { timeoutMs: connection.definition.options.callTimeoutMs, signal: extra.signal });
  } catch (error) {
    throw forwardedError(connection.name, error);
  }
  const checked = schema.safeParse(result);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    throw gatewayError(ErrorCode.InternalError, `Server "${connection.name}" answered ${method} with an invalid result${issue ? ` (${issue.path.join('/') || 'result'}: ${issue.message})` : ''}; ask the server's author to fix it.`);
  }
  return result;
}
