import type { CallError } from './callEnvelope';
import type { ServerStatus, ServerTool } from '../connection/serverConnection';
import { changedHeldServers, heldBackMessage, holdBackIfChanged, type HeldBackTool, type PinnedServer, type ToolPins } from '../security/toolPins';

/**
 * The router's side of tool pinning (src/core/security/toolPins.ts): which listed tools the last catalogue
 * build held back, why a call of one fails, and accepting a change. The router owns the catalogue; this
 * owns the held-back set it builds beside it.
 */

/** A server's status as the router reports it: the connection's, plus the tools it holds back. */
export interface RoutedServerStatus extends ServerStatus {
  /** Exposed names of this server's held-back tools (see {@link HeldBackTools.list}); absent when none. */
  readonly heldBackTools?: readonly string[];
}

export type AcceptResult = { readonly ok: true } | { readonly ok: false; readonly reason: string };

export class HeldBackTools {
  private held = new Map<string, HeldBackTool>();

  /** `pins` absent: nothing is pinned, so nothing is ever held back. */
  constructor(readonly pins: ToolPins | undefined, private readonly log: (server: string, line: string) => void) {}

  /** The tool as held back when its pin says so; undefined when it may be offered (or nothing is pinned). */
  check(server: PinnedServer, tool: ServerTool, name: string): HeldBackTool | undefined {
    if (!this.pins) return undefined;
    return holdBackIfChanged(this.pins, server, tool, name, (line) => this.log(server.name, line));
  }

  /** Takes the held-back set of a new catalogue build; returns the servers whose held-back tools differ. */
  replace(next: Map<string, HeldBackTool>): Set<string> {
    const changed = changedHeldServers(this.held, next);
    this.held = next;
    return changed;
  }

  get(name: string): HeldBackTool | undefined {
    return this.held.get(name);
  }

  /** Held-back tools of one server, or all. */
  list(server?: string): HeldBackTool[] {
    return [...this.held.values()].filter((h) => server === undefined || h.server === server);
  }

  withHeldBack(status: ServerStatus): RoutedServerStatus {
    const held = this.list(status.name).map((h) => h.name);
    return held.length > 0 ? { ...status, heldBackTools: held } : status;
  }

  /** The error a call of a held-back tool answers; undefined when `name` is not held back. */
  callError(name: string): CallError | undefined {
    const held = this.held.get(name);
    if (!held || !this.pins) return undefined;
    // NOT_APPROVED: the user has not approved this definition; retrying cannot help until they do.
    return { type: 'NOT_APPROVED', message: heldBackMessage(held, this.pins), retryable: false };
  }

  /**
   * Records the changed definition of held-back `name` as approved, unless it cannot be (the reason
   * says why); `saved` resolves once it is written. The caller rebuilds its catalogue to bring it back.
   */
  accept(name: string, fingerprint: string | undefined, pinnedOf: (server: string) => PinnedServer | undefined): { readonly ok: true; readonly saved: Promise<void> } | { readonly ok: false; readonly reason: string } {
    const held = this.held.get(name);
    const pinned = held ? pinnedOf(held.server) : undefined;
    if (!this.pins) return { ok: false, reason: 'Tool pinning is off in this router, so nothing is held back.' };
    if (!held || !pinned) return { ok: false, reason: `"${name}" is not held back: its change was accepted already, or its server no longer lists it.` };
    if (!held.change) return { ok: false, reason: `"${name}" cannot be accepted: server "${held.server}" ${held.reason}.` };
    if (fingerprint !== undefined && fingerprint !== held.change.fingerprint) {
      return { ok: false, reason: `Server "${held.server}" changed "${held.originalName}" again while you reviewed it; review the new change.` };
    }
    return { ok: true, saved: this.pins.accept(pinned, held.originalName, held.change.current) };
  }
}
