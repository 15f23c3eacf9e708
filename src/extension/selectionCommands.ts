import * as path from 'node:path';
import * as vscode from 'vscode';
import { EmbeddingError } from '../core/embedding/embedder';
import { downloadModelFolder } from '../core/embedding/modelDownload';
import { downloadPinnedModel, findPinnedModel, isPinnedModelInstalled, PINNED_MODELS, pinnedModelBytes, type PinnedModel } from '../core/embedding/pinnedModels';
import { explainText } from '../core/selection/selectionText';
import type { Selection } from '../core/selection/selectionTypes';
import type { ResultDocuments } from './callToolCommand';
import type { RouterService } from './routerService';
import type { SelectionService } from './selectionService';
import { SETTINGS_SECTION } from './settingsSchema';
import { describeError } from '../core/errors/describeError';

/**
 * Explain Selection…, Download Model… and Set Embeddings API Key. Explain runs selection on a typed
 * prompt without calling a model, and shows every chosen, dropped and near-miss tool with its scores and
 * reasons (selectionText.ts).
 */

export async function explainSelection(selection: SelectionService, results: ResultDocuments, arg?: { prompt?: string; quiet?: boolean }): Promise<Selection | undefined> {
  const prompt =
    arg?.prompt ??
    (await vscode.window.showInputBox({ title: vscode.l10n.t('Explain tool selection'), prompt: vscode.l10n.t('A chat prompt; selection runs on it without calling a model.'), ignoreFocusOut: true }));
  if (!prompt) return undefined;
  const result = await selection.select(prompt);
  if (!arg?.quiet) {
    const doc = await vscode.workspace.openTextDocument(results.add('selection', explainText(result), 'txt'));
    await vscode.window.showTextDocument(doc, { preview: true });
  }
  return result;
}

/** What Download Model… accepts as a command argument (tests and the first-run offer pass these). */
export interface DownloadModelArgs {
  /** A model folder's URL: the custom flow, no picker. */
  readonly url?: string;
  /** Expected sha256 of model.onnx for a custom URL. */
  readonly sha256?: string;
  /** Folder name for a custom URL. */
  readonly name?: string;
  /** Whether to switch toolRouter.embeddings.model to the download (asked for a custom URL when unset). */
  readonly use?: boolean;
  /** A pinned model's id (see src/core/embedding/pinnedModels.ts): no picker. */
  readonly pinned?: string;
}

/**
 * Download Model…: a pinned pretrained model chosen from a list (or given by id), or any model folder
 * from a URL. Returns the installed folder, or undefined when nothing was installed.
 */
export async function downloadModel(context: vscode.ExtensionContext, service: RouterService, arg?: DownloadModelArgs): Promise<string | undefined> {
  if (arg?.url) return downloadFromUrl(context, service, arg);
  let choice: PinnedModel | 'custom' | undefined;
  if (arg?.pinned !== undefined) {
    choice = findPinnedModel(arg.pinned);
    if (!choice) {
      void vscode.window.showErrorMessage(vscode.l10n.t('There is no pinned model "{0}". Known models: {1}.', arg.pinned, PINNED_MODELS.map((m) => m.id).join(', ')));
      return undefined;
    }
  } else {
    choice = await pickModel(context);
  }
  if (choice === 'custom') return downloadFromUrl(context, service, arg ?? {});
  if (!choice) return undefined;
  return installPinnedModel(context, service, choice, arg?.use ?? true);
}

/** Where a pinned model lives: one folder per model id in the extension's global storage. */
export function pinnedModelFolder(context: vscode.ExtensionContext, model: PinnedModel): string {
  return vscode.Uri.joinPath(context.globalStorageUri, 'models', model.id).fsPath;
}

interface ModelPickItem extends vscode.QuickPickItem {
  readonly choice?: PinnedModel | 'custom';
}

async function pickModel(context: vscode.ExtensionContext): Promise<PinnedModel | 'custom' | undefined> {
  const items: ModelPickItem[] = [];
  for (const model of PINNED_MODELS) {
    const installed = await isPinnedModelInstalled(model, pinnedModelFolder(context, model));
    items.push({
      label: model.label,
      description: [megabytes(pinnedModelBytes(model)), vscode.l10n.t('{0} dimensions', model.dimension), model.license, ...(installed ? [vscode.l10n.t('downloaded')] : [])].join(' · '),
      detail: model.goodAt,
      choice: model,
    });
  }
  items.push({ label: '', kind: vscode.QuickPickItemKind.Separator });
  items.push({ label: vscode.l10n.t('Custom URL…'), detail: vscode.l10n.t('Any folder holding model.onnx and tokenizer.json, with an optional SHA-256 check of model.onnx'), choice: 'custom' });
  const picked = await vscode.window.showQuickPick(items, {
    title: vscode.l10n.t('Download an embedding model for tool selection'),
    placeHolder: vscode.l10n.t('Pinned models are checked file by file against their published SHA-256'),
    matchOnDetail: true,
    ignoreFocusOut: true,
  });
  return picked?.choice;
}

async function installPinnedModel(context: vscode.ExtensionContext, service: RouterService, model: PinnedModel, use: boolean): Promise<string | undefined> {
  const dest = pinnedModelFolder(context, model);
  try {
    if (await isPinnedModelInstalled(model, dest)) {
      service.log.info(`Model ${model.id} is already in ${dest}; not downloading it again.`);
    } else {
      await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Downloading {0}', model.label), cancellable: true },
        async (progress, token) => {
          const controller = new AbortController();
          const cancel = token.onCancellationRequested(() => controller.abort());
          let last = 0;
          try {
            await downloadPinnedModel(model, {
              dest,
              signal: controller.signal,
              onProgress: (done, total) => {
                const pct = (100 * done) / total;
                // A server that ignores a resume request starts the file over: the bar never moves back.
                progress.report({ message: vscode.l10n.t('{0}% · {1} of {2}', pct.toFixed(0), megabytes(done), megabytes(total)), increment: Math.max(0, pct - last) });
                last = Math.max(last, pct);
              },
            });
          } finally {
            cancel.dispose();
          }
        },
      );
      service.log.info(`Downloaded ${model.id} from ${model.source} to ${dest}; every file matched its pinned SHA-256.`);
    }
    if (use) {
      await useModelFolder(dest);
      void vscode.window.showInformationMessage(vscode.l10n.t('Tool selection now uses {0} ({1}).', model.label, model.license));
    }
    return dest;
  } catch (error) {
    if (error instanceof EmbeddingError && error.kind === 'CANCELLED') {
      service.log.info(`Download of ${model.id} cancelled; the bytes received are kept in a partial folder beside ${dest}.`);
      void vscode.window.showInformationMessage(vscode.l10n.t('The download of {0} was cancelled and nothing was installed. What arrived is kept: downloading it again continues from there.', model.label));
      return undefined;
    }
    service.log.error(`Downloading ${model.id} failed: ${describeError(error)}`);
    void vscode.window.showErrorMessage(vscode.l10n.t('Downloading {0} failed: {1}', model.label, describeError(error)));
    return undefined;
  }
}

/** Points local embeddings at `folder`, for every workspace. */
async function useModelFolder(folder: string): Promise<void> {
  const config = vscode.workspace.getConfiguration(SETTINGS_SECTION);
  await config.update('embeddings.provider', 'local', vscode.ConfigurationTarget.Global);
  await config.update('embeddings.model', folder, vscode.ConfigurationTarget.Global);
}

function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

async function downloadFromUrl(context: vscode.ExtensionContext, service: RouterService, arg: DownloadModelArgs): Promise<string | undefined> {
  const url =
    arg.url ??
    (await vscode.window.showInputBox({
      title: vscode.l10n.t('Download an embedding model'),
      prompt: vscode.l10n.t('URL of a model folder holding model.onnx and tokenizer.json (e.g. an ONNX export of all-MiniLM-L6-v2)'),
      ignoreFocusOut: true,
      validateInput: (v) => (/^https?:\/\/\S+$/.test(v) ? undefined : vscode.l10n.t('Enter an http(s) URL')),
    }));
  if (!url) return undefined;
  const sha =
    arg.sha256 ??
    (await vscode.window.showInputBox({
      title: vscode.l10n.t('Expected SHA-256 of model.onnx'),
      prompt: vscode.l10n.t('Paste the published SHA-256 of model.onnx to have it checked (recommended), or leave empty to skip the check.'),
      ignoreFocusOut: true,
      validateInput: (v) => (v === '' || /^[0-9a-fA-F]{64}$/.test(v) ? undefined : vscode.l10n.t('A SHA-256 is 64 hex digits')),
    }));
  if (sha === undefined) return undefined;
  const name = (arg.name ?? (new URL(url).pathname.split('/').filter(Boolean).pop() || 'model')).replace(/[^A-Za-z0-9._-]/g, '_');
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
    const use = arg.use ?? (await vscode.window.showInformationMessage(vscode.l10n.t('Model {0} downloaded. Use it for tool selection?', name), vscode.l10n.t('Use It'))) !== undefined;
    if (use) await useModelFolder(dest);
    return dest;
  } catch (error) {
    void vscode.window.showErrorMessage(vscode.l10n.t('Downloading the model failed: {0}', describeError(error)));
    return undefined;
  }
}

export async function setEmbeddingsApiKey(selection: SelectionService): Promise<void> {
  const value = await vscode.window.showInputBox({ title: vscode.l10n.t('API key for the embeddings endpoint'), password: true, prompt: vscode.l10n.t('Kept in VS Code secret storage; leave empty to remove it.'), ignoreFocusOut: true });
  if (value === undefined) return;
  await selection.setApiKey(value || undefined);
}
