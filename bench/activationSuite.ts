/**
 * The measurement behind `npm run bench:activation`, run inside the real VS Code host as its extension
 * test module: activates the router (the workspace does not activate it on its own), then waits for the
 * first selection over the 1,000-tool catalogue with the bundled model, and writes what it measured as
 * JSON to BENCH_ACTIVATION_OUT.
 */
import { writeFileSync } from 'node:fs';
import * as vscode from 'vscode';
import type { ToolRouterApi } from '../src/extension/extension';

/** The catalogue the bench configures: one server with 1,000 tools. */
const EXPECTED_TOOLS = 1000;
const PROMPT = 'look up the weather forecast for Lyon tomorrow';

export async function run(): Promise<void> {
  const extension = vscode.extensions.getExtension<ToolRouterApi>('mcp-tool-router.mcp-tool-router');
  if (!extension) throw new Error('the router extension is not installed');
  if (extension.isActive) throw new Error('the extension was already active: the bench workspace must not activate it');
  const before = performance.now();
  const api = await extension.activate();
  const loadAndActivateMs = performance.now() - before;
  await api.whenSettled(60_000);
  const engine = await api.selection.getEngine();
  await engine.index?.whenReady();
  while (api.service.router.listTools().length < EXPECTED_TOOLS) await new Promise((r) => setTimeout(r, 20));
  // The index embeds the tools in the background; the first selection is ready once it has all of them.
  await engine.index?.whenReady();
  const selection = await api.selection.select(PROMPT);
  const firstSelectionMs = performance.now() - api.activation.startedAt;
  writeFileSync(
    process.env['BENCH_ACTIVATION_OUT'] ?? 'activation.json',
    JSON.stringify({ activate_ms: api.activation.ms, load_and_activate_ms: loadAndActivateMs, first_selection_ms: firstSelectionMs, tools: api.service.router.listTools().length, method: selection.method, chosen: selection.tools.length }),
  );
}
