/**
 * The measurement behind `npm run bench:activation`, run inside the real VS Code host as its extension
 * test module: activates the router (the workspace does not activate it on its own), then watches, without
 * asking for anything the extension would not do by itself, for the moments its first selection over the
 * 1,000-tool catalogue depends on: the selection engine loaded, the 1,000 tools in its catalogue (listed
 * by the server, or saved from the last session while it starts), every tool embedded. The servers' start
 * and the tools listed are taken from the router's events; the rest is polled from the host's own thread,
 * so after a busy stretch of that thread a polled moment can be late. It selects as soon
 * as all three hold, and writes what it measured as JSON to BENCH_ACTIVATION_OUT. With
 * BENCH_ACTIVATION_FLUSH set it then writes the embedding cache and the tool lists to disk, for the runs
 * that follow.
 * With BENCH_ACTIVATION_PROFILE set to a file, it also writes a CPU profile of the extension host's main
 * thread, from just before `activate()` to the first selection (open it in Chrome's DevTools or VS Code).
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import * as vscode from 'vscode';
import type { SelectionEngine } from '../src/core/selection/selectionEngine';
import type { ToolRouterApi } from '../src/extension/api';
import { internalsOf } from '../src/extension/internals';

/** The catalogue the bench configures: one server with 1,000 tools. */
const EXPECTED_TOOLS = 1000;
const PROMPT = 'look up the weather forecast for Lyon tomorrow';
/** How often the moments are checked: fine enough for figures in tens of milliseconds. */
const POLL_MS = 5;
const GIVE_UP_MS = 60_000;

export async function run(): Promise<void> {
  const extension = vscode.extensions.getExtension<ToolRouterApi>('mcp-tool-router.mcp-tool-router');
  if (!extension) throw new Error('the router extension is not installed');
  if (extension.isActive) throw new Error('the extension was already active: the bench workspace must not activate it');
  const profile = await startProfile(process.env['BENCH_ACTIVATION_PROFILE']);
  const before = performance.now();
  const cpuBefore = threadCpuMs();
  const api = internalsOf(await extension.activate());
  const loadAndActivateMs = performance.now() - before;
  const since = (): number => performance.now() - api.activation.startedAt;
  const moments: { servers?: number; tools?: number; engine?: number; catalogue?: number; embedded?: number } = {};
  // The moment the router hands the catalogue over, before selection builds anything from it.
  const listed = (count: number): void => {
    if (moments.tools === undefined && count >= EXPECTED_TOOLS) moments.tools = since();
  };
  const offTools = api.service.router.onDidChangeTools((tools) => listed(tools.length));
  listed(api.service.router.listTools().length);
  // Taken when it happens, not at the next poll: the host's thread may be busy for a while after it.
  const started = (): void => {
    if (moments.servers === undefined && api.service.router.listConnections().length > 0) moments.servers = since();
  };
  const offStatus = api.service.router.onDidChangeServerStatus(started);
  started();
  let engine: SelectionEngine | undefined;
  while (moments.embedded === undefined) {
    if (since() > GIVE_UP_MS) throw new Error(`no selection after ${GIVE_UP_MS} ms: ${JSON.stringify(moments)}`);
    // The configuration has been read and the server asked to start (its process is being spawned).
    started();
    if (!engine) {
      try {
        engine = api.selection.current();
        moments.engine = since();
      } catch {
        // Not loaded yet: the extension loads it on its own schedule.
      }
    }
    if (moments.catalogue === undefined && engine && engine.selector.catalogue.length >= EXPECTED_TOOLS) moments.catalogue = since();
    const readiness = engine?.index?.readiness();
    if (moments.catalogue !== undefined && readiness && readiness.ready === readiness.total) moments.embedded = since();
    else await new Promise((r) => setTimeout(r, POLL_MS));
  }
  const selection = await api.selection.select(PROMPT);
  const firstSelectionMs = since();
  // Both from before the bundle loads: the CPU time cannot be split at the moment activate() began.
  const cpuMs = threadCpuMs() - cpuBefore;
  const wallMs = performance.now() - before;
  await profile?.();
  // A baseline built from an older revision may predate saved tool lists.
  const savedOnly = (name: string): boolean => (typeof api.selection.isSavedOnly === 'function' ? api.selection.isSavedOnly(name) : false);
  const savedSelected = selection.tools.filter((t) => savedOnly(t.name)).length;
  writeFileSync(
    process.env['BENCH_ACTIVATION_OUT'] ?? 'activation.json',
    JSON.stringify({
      activate_ms: api.activation.ms,
      load_and_activate_ms: loadAndActivateMs,
      servers_started_ms: moments.servers,
      tools_listed_ms: moments.tools,
      engine_loaded_ms: moments.engine,
      catalogue_ms: moments.catalogue,
      all_embedded_ms: moments.embedded,
      first_selection_ms: firstSelectionMs,
      tools: engine!.selector.catalogue.length,
      saved_selected: savedSelected,
      method: selection.method,
      chosen: selection.tools.length,
      load_to_selection_ms: wallMs,
      load_to_selection_thread_cpu_ms: cpuMs,
    }),
  );
  if (process.env['BENCH_ACTIVATION_FLUSH']) {
    await engine!.flush();
    // The tool lists are saved once the server has listed its tools (at once when it already has).
    await api.service.router.whenSettled(GIVE_UP_MS);
    if (typeof api.selection.saveToolLists === 'function') await api.selection.saveToolLists();
  }
  offTools();
  offStatus();
}

/**
 * CPU time of the extension host's main thread so far (Node 23.9 and later), else of its whole process: set
 * beside the wall time, it shows how much of the wait was this thread's own work.
 */
function threadCpuMs(): number {
  const usage = (process as { threadCpuUsage?: () => NodeJS.CpuUsage }).threadCpuUsage?.() ?? process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/** Starts the V8 profiler when `file` is set; the function it returns stops it and writes the profile there. */
async function startProfile(file: string | undefined): Promise<(() => Promise<void>) | undefined> {
  if (!file) return undefined;
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  // 200 µs between samples, a fifth of the default: the steps that matter here take a few milliseconds.
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
  };
}
