import type { ServerDefinition } from '../../../src/core/config/serverConfig';
import type { Connection, ServerState, ServerStatus, ServerTool } from '../../../src/core/connection/serverConnection';
import type { ServerNotice } from '../../../src/core/connection/serverNotices';
import { ServerLog } from '../../../src/core/connection/serverLog';

/**
 * The part of a FAKE connection that the gateway tests share: a server that is already running, never
 * restarts, signs in or refreshes, and tells of no changes. A fake adds its tools, capabilities and answers.
 */
export abstract class FakeConnectionBase implements Connection {
  readonly log = new ServerLog();
  readonly oauth = undefined;
  readonly instructions: string | undefined = undefined;
  abstract readonly currentState: ServerState;
  abstract readonly tools: readonly ServerTool[];
  abstract readonly serverCapabilities: Record<string, unknown> | undefined;
  constructor(readonly definition: ServerDefinition) {}
  get name(): string {
    return this.definition.name;
  }
  get status(): ServerStatus {
    return { name: this.name, state: this.currentState, restarts: 0, toolCount: this.tools.length };
  }
  abstract callTool(tool: string, args: Record<string, unknown>): Promise<Record<string, unknown>>;
  abstract request(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>>;
  start(): void {}
  async restart(): Promise<void> {}
  async stop(): Promise<void> {}
  isSettled(): boolean {
    return true;
  }
  async whenSettled(): Promise<void> {}
  async whenReady(): Promise<boolean> {
    return this.currentState === 'ready';
  }
  async refreshTools(): Promise<void> {}
  async signIn(): Promise<void> {}
  async signOut(): Promise<void> {}
  onDidChangeStatus(_listener: (status: ServerStatus) => void): () => void {
    return () => undefined;
  }
  onDidChangeTools(): () => void {
    return () => undefined;
  }
  onDidNotify(_listener: (notice: ServerNotice) => void): () => void {
    return () => undefined;
  }
}
