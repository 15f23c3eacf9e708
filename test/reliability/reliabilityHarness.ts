/**
 * The bookkeeping of the reliability suite: case groups, lost calls and crashes.
 *
 * A "lost call" is a router call that did not end within its deadline, or ended without a result envelope.
 * A "crash" is an uncaught exception or unhandled rejection in this process while the suite runs.
 */
import type { CallEnvelope } from '../../src/core/router/callEnvelope';
import { ToolRouter } from '../../src/core/router/toolRouter';
import type { ToolRouterOptions } from '../../src/core/router/toolRouter';
import { EVERYTHING, TEST_BACKOFF_MS, definitions } from '../integration/serverHarness';

export interface CaseResult {
  readonly group: string;
  readonly name: string;
  /** Inputs the case tried (each counts as a case in the totals). */
  readonly inputs: number;
  readonly passed: boolean;
  readonly detail?: string;
}

export interface Totals {
  lostCalls: number;
  crashes: number;
}

export const totals: Totals = { lostCalls: 0, crashes: 0 };
export const crashMessages: string[] = [];

export function installCrashCounters(): void {
  process.on('uncaughtException', (error) => {
    totals.crashes++;
    crashMessages.push(`uncaughtException: ${error.stack ?? String(error)}`);
  });
  process.on('unhandledRejection', (reason) => {
    totals.crashes++;
    crashMessages.push(`unhandledRejection: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`);
  });
}

/** Lost calls charged to each group, for the table. */
export const lostByGroup = new Map<string, number>();
let currentGroup = '';
export function setGroup(group: string): void {
  currentGroup = group;
}

/** A check that fails its case with a message. */
export function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

function isEnvelope(v: unknown): v is CallEnvelope {
  if (typeof v !== 'object' || v === null) return false;
  const e = v as Record<string, unknown>;
  if (typeof e['ok'] !== 'boolean' || typeof e['meta'] !== 'object' || e['meta'] === null) return false;
  if (e['ok'] === false) {
    const err = e['error'] as Record<string, unknown> | undefined;
    return typeof err === 'object' && err !== null && typeof err['type'] === 'string' && typeof err['message'] === 'string';
  }
  return Array.isArray(e['content']);
}

/**
 * Calls through the router and counts the call as lost if it does not end with an envelope by `deadlineMs`.
 * Returns undefined for a lost call so the case can fail on it too.
 */
export async function trackedCall(router: ToolRouter, name: string, args: unknown, deadlineMs: number, timeoutMs?: number): Promise<CallEnvelope | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const lost = new Promise<'lost'>((resolve) => {
    timer = setTimeout(() => resolve('lost'), deadlineMs);
  });
  try {
    const outcome = await Promise.race([router.call(name, args, timeoutMs !== undefined ? { timeoutMs } : {}).catch((error: unknown) => ({ threw: error })), lost]);
    if (outcome === 'lost' || !isEnvelope(outcome)) {
      totals.lostCalls++;
      lostByGroup.set(currentGroup, (lostByGroup.get(currentGroup) ?? 0) + 1);
      return undefined;
    }
    return outcome;
  } finally {
    clearTimeout(timer);
  }
}

/** The healthy neighbour every fault case keeps beside the faulty server. */
export const HEALTHY = { type: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'] };

export async function startRouter(servers: Record<string, unknown>, options: ToolRouterOptions = {}, settleMs = 20_000): Promise<ToolRouter> {
  const router = new ToolRouter({ backoffMs: TEST_BACKOFF_MS, ...options });
  await router.applyConfig(await definitions({ servers }));
  await router.whenSettled(settleMs);
  return router;
}

/** The healthy neighbour still answers: the fault stayed with its own server. */
export async function assertNeighbourHealthy(router: ToolRouter): Promise<void> {
  await router.waitForTool('healthy_echo', 20_000);
  const e = await trackedCall(router, 'healthy_echo', { message: 'still here' }, 15_000);
  check(e?.ok === true, `the healthy server did not answer: ${errorOf(e)}`);
}

export function errorOf(e: CallEnvelope | undefined): string {
  if (!e) return 'the call was lost';
  return e.ok ? 'the call succeeded' : `${e.error.type}: ${e.error.message}`;
}

export async function sleep(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

export function errorType(e: CallEnvelope | undefined): string | undefined {
  return e && !e.ok ? e.error.type : undefined;
}
