import * as path from 'node:path';
import * as vscode from 'vscode';
import { downloadModelFolder } from '../core/embedding/modelDownload';
import type { Selection } from '../core/selection/selectionTypes';
import type { ResultDocuments } from './callToolCommand';
import type { RouterService } from './routerService';
import type { SelectionService } from './selectionService';
import { SETTINGS_SECTION } from './settings';

/**
 * Explain Selection…, Download Model… and Set Embeddings API Key. Explain runs selection on a typed
 * prompt without calling a model, and shows every chosen and dropped tool with its scores and reasons.
 */

export async function explainSelection(selection: SelectionService, results: ResultDocuments, arg?: { prompt?: string; quiet?: boolean }): Promise<Selection | undefined> {
  const prompt =
    arg?.prompt ??
    (await vscode.window.showInputBox({ title: vscode.l10n.t('Explain tool selection'), prompt: vscode.l10n.t('A chat prompt; selection runs on it without calling a model.'), ignoreFocusOut: true }));
  if (!prompt) return undefined;
  const result = await selection.select(prompt);
  if (!arg?.quiet) {
    const doc = await vscode.workspace.openTextDocument(results.add('selection', describeSelection(result)));
    await vscode.window.showTextDocument(doc, { preview: true });
  }
  return result;
}

/** A plain-text account of a selection (the panel shows the same with bars). */
export function describeSelection(s: Selection): string {
  const lines = [
    `// Prompt: ${s.prompt.replace(/\n/g, ' ')}`,
    `// Method: ${s.method}${s.methodNote ? ` — ${s.methodNote}` : ''}`,
    `// ${s.tools.length} tools sent, ~${s.tokens.selected} of ${s.tokens.catalogue} catalogue tokens; threshold ${s.threshold}`,
    '',
  ];
  for (const t of s.tools) {
    const scores = [t.score !== undefined ? `score ${t.score.toFixed(2)}` : '', t.cosine !== undefined ? `cosine ${t.cosine.toFixed(2)}` : '', t.lexical !== undefined ? `lexical ${t.lexical.toFixed(2)}` : ''].filter(Boolean).join(', ');
    lines.push(`+ ${t.name}  [${t.stages.join(', ')}] ${scores}\n    ${t.reason}`);
  }
  if (s.dropped.length) lines.push('', '// Left out:');
  for (const d of s.dropped) lines.push(`- ${d.name}  (${d.by}) ${d.reason}`);
  if (s.issues.length) lines.push('', '// Issues:', ...s.issues.map((i) => `! ${i}`));
  lines.push('', `// Timings (ms): ${Object.entries(s.timingsMs).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ')}`);
  return `${lines.join('\n')}\n`;
}

export async function downloadModel(context: vscode.ExtensionContext, service: RouterService, arg?: { url?: string; sha256?: string; name?: string; use?: boolean }): Promise<string | undefined> {
  const url =
    arg?.url ??
    (await vscode.window.showInputBox({
      title: vscode.l10n.t('Download an embedding model'),
      prompt: vscode.l10n.t('URL of a model folder holding model.onnx and tokenizer.json (e.g. an ONNX export of all-MiniLM-L6-v2)'),
      ignoreFocusOut: true,
      validateInput: (v) => (/^https?:\/\/\S+$/.test(v) ? undefined : vscode.l10n.t('Enter an http(s) URL')),
    }));
  if (!url) return undefined;
  const sha =
    arg?.sha256 ??
    (await vscode.window.showInputBox({
      title: vscode.l10n.t('Expected SHA-256 of model.onnx'),
      prompt: vscode.l10n.t('Paste the published SHA-256 of model.onnx to have it checked (recommended), or leave empty to skip the check.'),
      ignoreFocusOut: true,
      validateInput: (v) => (v === '' || /^[0-9a-fA-F]{64}$/.test(v) ? undefined : vscode.l10n.t('A SHA-256 is 64 hex digits')),
    }));
  if (sha === undefined) return undefined;
  const name = (arg?.name ?? (new URL(url).pathname.split('/').filter(Boolean).pop() || 'model')).replace(/[^A-Za-z0-9._-]/g, '_');
  const dest = path.join(vscode.Uri.joinPath(context.globalStorageUri, 'models', name).fsPath);
  try {
    const hashes = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Downloading model {0}', name), cancellable: true },
      async (progress, token) => {
        const controller = new AbortController();
        token.onCancellationRequested(() => controller.abort());
        let last = 0;
        return downloadModelFolder({
          url,
          dest,
          ...(sha ? { expectedSha256: { 'model.onnx': sha.toLowerCase() } } : {}),
          signal: controller.signal,
          onProgress: (done, total, file) => {
            if (!total) return progress.report({ message: `${file}: ${(done / 1e6).toFixed(1)} MB` });
            const pct = (100 * done) / total;
            progress.report({ message: `${file}: ${pct.toFixed(0)}%`, increment: Math.max(0, pct - last) });
            last = pct;
          },
        });
      },
    );
    service.log.info(`Downloaded model ${name} to ${dest} (model.onnx sha256 ${hashes['model.onnx'] ?? '?'}).`);
    const use = arg?.use ?? (await vscode.window.showInformationMessage(vscode.l10n.t('Model {0} downloaded. Use it for tool selection?', name), vscode.l10n.t('Use It'))) !== undefined;
    if (use) {
      const config = vscode.workspace.getConfiguration(SETTINGS_SECTION);
      await config.update('embeddings.provider', 'local', vscode.ConfigurationTarget.Global);
      await config.update('embeddings.model', dest, vscode.ConfigurationTarget.Global);
    }
    return dest;
  } catch (error) {
    void vscode.window.showErrorMessage(vscode.l10n.t('Downloading the model failed: {0}', (error as Error).message));
    return undefined;
  }
}

export async function setEmbeddingsApiKey(selection: SelectionService): Promise<void> {
  const value = await vscode.window.showInputBox({ title: vscode.l10n.t('API key for the embeddings endpoint'), password: true, prompt: vscode.l10n.t('Kept in VS Code secret storage; leave empty to remove it.'), ignoreFocusOut: true });
  if (value === undefined) return;
  await selection.setApiKey(value || undefined);
}
