import * as vscode from 'vscode';
import { findNodeAtLocation, parseTree, type Node as JsonNode } from 'jsonc-parser';
import { notApproved, type CallEnvelope } from '../core/router/callEnvelope';
import { decideCall } from '../core/policy/callPolicy';
import type { ConfigService } from './configService';
import { flatFields, schemaSkeleton, type FormField } from '../core/schema/schemaForms';
import type { RoutedTool } from '../core/router/toolRouter';
import { EDITOR_STARTUP_WAIT_MS } from '../core/router/startupWaits';
import { askField, CANCELLED, SKIPPED, type FieldAnswer } from './fieldPrompts';
import type { RouterService } from './routerService';
import { describeError } from '../core/errors/describeError';

/**
 * "Call Tool…": pick a tool, give its arguments, confirm if the call policy asks, see the result.
 *
 * Arguments of a flat schema are asked property by property; other schemas open a JSON editor with a
 * skeleton. Validation errors are shown at the field (the input box, or a squiggle in the JSON editor),
 * and the person fixes them in place instead of starting over.
 *
 * Called with `{tool, args, confirmDestructive}` (by tests, the tree, or other extensions) it skips the
 * questions it has answers for. It returns the envelope, or undefined when the person cancelled.
 */

export interface CallToolRequest {
  readonly tool?: string;
  readonly args?: unknown;
  /** Skip the confirmation for destructive tools (the caller has asked already). */
  readonly confirmDestructive?: boolean;
  /** Do not open the result editor (for callers that only want the envelope). */
  readonly quiet?: boolean;
}

export const RESULT_SCHEME = 'tool-router-result';

/** Read-only documents holding call results, addressed by a counter in the URI. */
export class ResultDocuments implements vscode.TextDocumentContentProvider {
  private readonly contents = new Map<string, string>();
  private counter = 0;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.contents.get(uri.path) ?? '';
  }

  /** @param kind `jsonc` for call results (JSON with a comment line), `txt` for reports that are not JSON. */
  add(title: string, text: string, kind: 'jsonc' | 'txt' = 'jsonc'): vscode.Uri {
    const uri = vscode.Uri.from({ scheme: RESULT_SCHEME, path: `/${++this.counter}/${title}.${kind}` });
    this.contents.set(uri.path, text);
    return uri;
  }
}

export async function callToolCommand(service: RouterService, config: ConfigService, results: ResultDocuments, request: CallToolRequest = {}): Promise<CallEnvelope | undefined> {
  const tool = request.tool ? await findTool(service, request.tool) : await pickTool(service);
  if (!tool) return undefined;

  let args: unknown = request.args;
  if (args === undefined) {
    args = await askArguments(service, tool);
    if (args === undefined) return undefined;
  }

  // The person picked this tool; the policy still decides (`never` refuses it here too).
  const decision = decideCall(config.callPolicy(), tool, { canAsk: true, confirmedByPerson: request.confirmDestructive === true });
  if (decision.verdict === 'refuse') {
    void vscode.window.showErrorMessage(decision.message);
    return notApproved(tool, decision.message);
  }
  if (decision.verdict === 'ask') {
    const run = vscode.l10n.t('Run');
    const answer = await vscode.window.showWarningMessage(
      vscode.l10n.t('"{0}" on server "{1}" is marked destructive: it may change or delete data. Run it?', tool.originalName, tool.server),
      { modal: true },
      run,
    );
    if (answer !== run) return undefined;
  }

  const envelope = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Calling {0}…', tool.name), cancellable: true },
    (progress, token) => {
      const controller = new AbortController();
      token.onCancellationRequested(() => controller.abort());
      // The server's progress notifications, as the notification's message (and its bar, when it gives a total).
      let reported = 0;
      const onProgress = (p: { progress: number; total?: number; message?: string }): void => {
        const share = p.total ? Math.min(100, (100 * p.progress) / p.total) : undefined;
        progress.report({ message: p.message ?? (p.total ? `${p.progress}/${p.total}` : String(p.progress)), ...(share !== undefined && share > reported ? { increment: share - reported } : {}) });
        if (share !== undefined) reported = Math.max(reported, share);
      };
      return service.router.call(tool.name, args, { signal: controller.signal, onProgress });
    },
  );

  const summary = `${tool.name} · ${envelope.ok ? 'ok' : envelope.error.type} · ${envelope.meta.latencyMs.toFixed(1)} ms · ${envelope.meta.bytes} bytes`;
  if (!request.quiet) {
    const uri = results.add(`${tool.name}-result`, `// ${summary}\n${JSON.stringify(envelope, null, 2)}\n`);
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { preview: true });
  }
  if (!envelope.ok) void vscode.window.showErrorMessage(`${tool.name}: ${envelope.error.message}`);
  return envelope;
}

async function findTool(service: RouterService, name: string): Promise<RoutedTool | undefined> {
  const tool = service.router.getTool(name) ?? (await service.router.waitForTool(name, EDITOR_STARTUP_WAIT_MS));
  if (!tool) void vscode.window.showErrorMessage(vscode.l10n.t('There is no tool named "{0}". Check that its server is running.', name));
  return tool;
}

interface ToolItem extends vscode.QuickPickItem {
  readonly tool: RoutedTool;
}

async function pickTool(service: RouterService): Promise<RoutedTool | undefined> {
  const quickPick = vscode.window.createQuickPick<ToolItem>();
  quickPick.title = vscode.l10n.t('Call an MCP tool');
  quickPick.placeholder = vscode.l10n.t('Type to search {0} tools by name, server or description', service.router.listTools().length);
  quickPick.matchOnDescription = true;
  quickPick.matchOnDetail = true;
  const fill = (): void => {
    quickPick.items = service.router.listTools().map((tool) => ({
      label: `${tool.annotations.destructiveHint ? '$(flame) ' : ''}${tool.schemaProblem ? '$(warning) ' : ''}${tool.name}`,
      description: tool.server + (tool.annotations.destructiveHint ? ` · ${vscode.l10n.t('destructive')}` : ''),
      detail: tool.originalDescription.split('\n')[0]?.slice(0, 200),
      tool,
    }));
    quickPick.busy = service.router.serverStatuses.some((s) => s.state === 'starting');
  };
  fill();
  const offTools = service.router.onDidChangeTools(fill);
  const offStatus = service.router.onDidChangeServerStatus(fill);
  try {
    return await new Promise<RoutedTool | undefined>((resolve) => {
      quickPick.onDidAccept(() => resolve(quickPick.selectedItems[0]?.tool));
      quickPick.onDidHide(() => resolve(undefined));
      quickPick.show();
    });
  } finally {
    offTools();
    offStatus();
    quickPick.dispose();
  }
}

async function askArguments(service: RouterService, tool: RoutedTool): Promise<Record<string, unknown> | undefined> {
  const fields = flatFields(tool.inputSchema);
  return fields ? askFieldByField(service, tool, fields) : askInJsonEditor(service, tool);
}

/** Asks each property in turn; after a failed check, re-asks only the fields with errors, showing the error. */
async function askFieldByField(service: RouterService, tool: RoutedTool, fields: readonly FormField[]): Promise<Record<string, unknown> | undefined> {
  const values: Record<string, unknown> = {};
  let toAsk = fields.map((f) => f.name);
  const errors = new Map<string, string>();
  for (;;) {
    for (const name of toAsk) {
      const field = fields.find((f) => f.name === name)!;
      const step = fields.indexOf(field) + 1;
      const answer = await askToolField(tool, field, step, fields.length, values[name], errors.get(name));
      if (answer === CANCELLED) return undefined;
      if (answer === SKIPPED) delete values[name];
      else Object.defineProperty(values, name, { value: answer.value, enumerable: true, writable: true, configurable: true });
    }
    const checked = service.router.checkArguments(tool.name, values);
    if (checked.ok) return values;
    errors.clear();
    for (const issue of checked.error.issues ?? [{ path: '/', message: checked.error.message }]) {
      const name = issue.path.split('/')[1] ?? '';
      errors.set(fields.some((f) => f.name === name) ? name : fields[0]?.name ?? '', issue.message);
    }
    toAsk = [...errors.keys()].filter((n) => n !== '');
    if (toAsk.length === 0) {
      void vscode.window.showErrorMessage(checked.error.message);
      return undefined;
    }
  }
}

async function askToolField(tool: RoutedTool, field: FormField, step: number, total: number, previous: unknown, error: string | undefined): Promise<FieldAnswer> {
  return askField(`${tool.name} (${step}/${total}): ${field.name}${field.required ? ' *' : ''}`, field, { previous, ...(error ? { error } : {}) });
}

/** Argument errors shown in the JSON editor; disposed with the extension (see activate). */
export const argumentDiagnostics = vscode.languages.createDiagnosticCollection('toolRouter.arguments');

/** Opens a JSON skeleton; "Call" checks it, marks errors in the editor, and waits for a fix. */
async function askInJsonEditor(service: RouterService, tool: RoutedTool): Promise<Record<string, unknown> | undefined> {
  const skeleton = JSON.stringify(schemaSkeleton(tool.inputSchema), null, 2);
  const doc = await vscode.workspace.openTextDocument({ language: 'json', content: skeleton });
  await vscode.window.showTextDocument(doc, { preview: false });
  const call = vscode.l10n.t('Call');
  try {
    for (;;) {
      const answer = await vscode.window.showInformationMessage(vscode.l10n.t('Edit the arguments for {0}, then press Call.', tool.name), call, vscode.l10n.t('Cancel'));
      if (answer !== call) return undefined;
      const text = doc.getText();
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (error) {
        argumentDiagnostics.set(doc.uri, [new vscode.Diagnostic(new vscode.Range(0, 0, doc.lineCount, 0), vscode.l10n.t('Not valid JSON: {0}', describeError(error)))]);
        continue;
      }
      const checked = service.router.checkArguments(tool.name, parsed);
      if (checked.ok) return checked.value;
      const root = parseTree(text);
      argumentDiagnostics.set(
        doc.uri,
        (checked.error.issues ?? [{ path: '/', message: checked.error.message }]).map((issue) => new vscode.Diagnostic(rangeOf(doc, root, issue.path), issue.message, vscode.DiagnosticSeverity.Error)),
      );
      void vscode.window.showErrorMessage(checked.error.message);
    }
  } finally {
    argumentDiagnostics.delete(doc.uri);
  }
}

/** The range of the value at a JSON pointer (or of its nearest existing parent, for a missing property). */
function rangeOf(doc: vscode.TextDocument, root: JsonNode | undefined, pointer: string): vscode.Range {
  const parts = pointer.split('/').slice(1).filter((p) => p !== '').map((p) => (/^\d+$/.test(p) ? Number(p) : p));
  for (let n = parts.length; n >= 0 && root; n--) {
    const node = findNodeAtLocation(root, parts.slice(0, n));
    if (node) return new vscode.Range(doc.positionAt(node.offset), doc.positionAt(node.offset + (n === parts.length ? node.length : 1)));
  }
  return new vscode.Range(0, 0, 0, 1);
}
