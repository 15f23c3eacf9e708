import type { CreateMessageRequest, CreateMessageResult, ElicitRequest, ElicitResult } from '@modelcontextprotocol/client';
import type { ServerDefinition } from '../config/serverConfig';
import type { RouterOAuthProvider } from '../auth/oauthProvider';

/**
 * What the router's MCP client can do for a server, beyond calling its tools: sign in to it, answer its
 * questions (elicitation), let it use a language model (sampling), tell it the workspace folders (roots),
 * and show what it reports on the way. The host provides each one (the CLI, VS Code); a feature the host
 * leaves out is not declared to servers, and their requests for it are refused by the SDK.
 */
export interface ClientFeatures {
  /** The OAuth provider for a remote server (undefined: 401 stays an error). Called once per connection. */
  readonly auth?: (definition: ServerDefinition) => RouterOAuthProvider | undefined;
  /** Asks the user for the values a server requests mid-call (form mode). */
  readonly elicit?: (server: string, params: ElicitRequest['params'], signal: AbortSignal) => Promise<ElicitResult>;
  /** Runs a server's `sampling/createMessage` on the host's model, after the user allowed it for that server. */
  readonly sample?: (server: string, params: CreateMessageRequest['params'], signal: AbortSignal) => Promise<CreateMessageResult>;
  /** The workspace folders, as roots. */
  readonly roots?: () => ReadonlyArray<{ readonly uri: string; readonly name?: string }>;
  /** Subscribes to changes of the roots; returns the unsubscribe. */
  readonly onRootsChanged?: (listener: () => void) => () => void;
}

/**
 * What the client that made a call can answer itself: the gateway's own MCP client, for a call that came
 * through the gateway. A server's elicitation or sampling request during that call goes to it first.
 */
export interface CallerFeatures {
  readonly elicit?: (params: ElicitRequest['params'], signal: AbortSignal) => Promise<ElicitResult>;
  readonly sample?: (params: CreateMessageRequest['params'], signal: AbortSignal) => Promise<CreateMessageResult>;
}
