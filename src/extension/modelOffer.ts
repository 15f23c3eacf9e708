import * as vscode from 'vscode';
import type { ConfigService } from './configService';
import { PINNED_MODELS, pinnedModelBytes } from '../core/embedding/pinnedModels';
import type { RouterService } from './routerService';
import type { SelectionService } from './selectionService';
import { COMMANDS } from './commandIds';
import { SETTINGS_SECTION } from './settingsSchema';
import { describeError } from '../core/errors/describeError';

/**
 * Two notices about the embedding model, both off the activation path:
 * - the first-run offer: while the bundled model is in use, propose once to download a pinned pretrained
 *   model ("Download" / "Not now" / "Don't ask again", remembered in global state; a setting turns it off);
 * - the fallback notice: when the configured model folder could not be used and selection fell back to
 *   the bundled model, say so and why, once per reason and window.
 */

/** Global-state key of the offer's answer. */
export const MODEL_OFFER_STATE_KEY = 'toolRouter.pretrainedModelOffer';
/** After "Not now" (or closing the message), ask again after two weeks: found again, never nagging. */
export const MODEL_OFFER_SNOOZE_MS = 14 * 24 * 60 * 60 * 1000;
/** Activation, the servers and the first model load come first; the offer waits this long after them. */
export const MODEL_OFFER_DELAY_MS = 15_000;

export type ModelOfferState = { readonly answer: 'never' | 'accepted' } | { readonly answer: 'later'; readonly until: number };

/** Whether the offer may be shown now, from the settings and the remembered answer. */
export function shouldOfferModel(current: { offer: boolean; provider: string; model: string }, state: ModelOfferState | undefined, now: number): boolean {
  if (!current.offer || current.provider !== 'local' || (current.model !== 'default' && current.model !== '')) return false;
  if (!state) return true;
  return state.answer === 'later' && now >= state.until;
}

export function registerModelNotices(context: vscode.ExtensionContext, service: RouterService, selection: SelectionService, config: ConfigService): vscode.Disposable {
  const shownFallbacks = new Set<string>();
  let offeredThisSession = false;
  let disposed = false;

  const checkFallback = async (): Promise<void> => {
    const engine = await selection.getEngine();
    const reason = engine.embedderFallback;
    if (disposed || !reason || shownFallbacks.has(reason)) return;
    shownFallbacks.add(reason);
    const download = vscode.l10n.t('Download Model…');
    const openSettings = vscode.l10n.t('Open Settings');
    const answer = await vscode.window.showWarningMessage(vscode.l10n.t('Tool selection uses the bundled model: {0}', reason), download, openSettings);
    if (answer === download) await vscode.commands.executeCommand(COMMANDS.downloadModel);
    if (answer === openSettings) await vscode.commands.executeCommand('workbench.action.openSettings', `${SETTINGS_SECTION}.embeddings.model`);
  };

  const offer = async (): Promise<void> => {
    const current = {
      offer: config.get('embeddings.offerPretrainedModel'),
      provider: config.get('embeddings.provider'),
      model: config.get('embeddings.model'),
    };
    if (disposed || offeredThisSession || !shouldOfferModel(current, context.globalState.get<ModelOfferState>(MODEL_OFFER_STATE_KEY), Date.now())) return;
    offeredThisSession = true;
    const sizes = PINNED_MODELS.map((m) => `${m.label.replace(/ \(.*\)$/, '')} (${Math.round(pinnedModelBytes(m) / 1e6)} MB)`).join(vscode.l10n.t(' or '));
    const download = vscode.l10n.t('Download');
    const later = vscode.l10n.t('Not now');
    const never = vscode.l10n.t("Don't ask again");
    const answer = await vscode.window.showInformationMessage(
      vscode.l10n.t('Tool Router picks tools with its small bundled model. With a network you can download a standard pretrained model instead: {0}, checked by SHA-256. The bundled model stays as the fallback.', sizes),
      download,
      later,
      never,
    );
    let state: ModelOfferState = { answer: 'later', until: Date.now() + MODEL_OFFER_SNOOZE_MS };
    if (answer === never) state = { answer: 'never' };
    if (answer === download) {
      const installed = await vscode.commands.executeCommand<string | undefined>(COMMANDS.downloadModel);
      if (installed) state = { answer: 'accepted' };
    }
    await context.globalState.update(MODEL_OFFER_STATE_KEY, state);
  };

  const run = (task: () => Promise<void>): void => {
    task().catch((error: unknown) => service.log.warn(`Model notice failed: ${describeError(error)}`));
  };
  // A timer, not an await: activation never waits for either notice.
  const timer = setTimeout(() => {
    run(checkFallback);
    run(offer);
  }, MODEL_OFFER_DELAY_MS);
  // The selection service rebuilds its engine on the same event (it subscribed first); look at the new one.
  const onConfig = config.onDidChange(['embeddings'], () => run(checkFallback));
  return new vscode.Disposable(() => {
    disposed = true;
    clearTimeout(timer);
    onConfig.dispose();
  });
}
