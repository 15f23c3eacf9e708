import * as vscode from 'vscode';
import type { HeldBackTool } from '../core/router/toolRouter';
import { describeFields } from '../core/security/toolPins';
import type { PinnedDefinition } from '../core/security/toolPinStore';
import { canonicalJson } from '../core/util/canonicalJson';
import type { RouterService } from './routerService';
import { COMMANDS } from './commandIds';

/**
 * Review Changed Tools: the tools the router holds back because their server changed their definition
 * since the user approved it (src/core/security/toolPins.ts). The user sees the change as a diff of the
 * approved and the listed definition, and accepts it (with a modal confirmation) or leaves it held back.
 * A warning, once per change, points to the command.
 */

export const PIN_DIFF_SCHEME = 'tool-router-pin';
/** A review opens two documents; older ones belong to diffs closed long ago. */
const MAX_KEPT_DOCUMENTS = 20;

/** Read-only documents holding the approved and the current definition, for `vscode.diff`. */
export class PinnedDefinitionDocuments implements vscode.TextDocumentContentProvider {
  private readonly contents = new Map<string, string>();
  private counter = 0;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.contents.get(uri.path) ?? '';
  }

  add(label: string, text: string): vscode.Uri {
    const uri = vscode.Uri.from({ scheme: PIN_DIFF_SCHEME, path: `/${++this.counter}/${label}.jsonc` });
    this.contents.set(uri.path, text);
    for (const key of [...this.contents.keys()].slice(0, Math.max(0, this.contents.size - MAX_KEPT_DOCUMENTS))) this.contents.delete(key);
    return uri;
  }
}

/** Pretty JSON with sorted keys, so both sides of the diff line up field by field. */
function definitionText(definition: PinnedDefinition | undefined, fingerprint: string): string {
  if (!definition) return `// ${vscode.l10n.t('The approved definition was too long to keep: only its fingerprint was recorded.')}\n// sha256 ${fingerprint}\n`;
  return `${JSON.stringify(JSON.parse(canonicalJson(definition)), null, 2)}\n`;
}

export interface ReviewToolChangesArgs {
  /** The exposed name of the held-back tool to review; asked with a QuickPick when absent. */
  readonly tool?: string;
}

interface HeldItem extends vscode.QuickPickItem {
  readonly held: HeldBackTool;
}

/** Returns true when the user accepted a change (the tool is back). */
export async function reviewToolChanges(service: RouterService, documents: PinnedDefinitionDocuments, arg?: ReviewToolChangesArgs): Promise<boolean> {
  const all = service.router.heldBackTools();
  if (all.length === 0) {
    void vscode.window.showInformationMessage(vscode.l10n.t('No tools are held back: every tool matches the definition you approved.'));
    return false;
  }
  const held = arg?.tool ? all.find((h) => h.name === arg.tool) : all.length === 1 ? all[0] : await pickHeld(all);
  if (!held) {
    if (arg?.tool) void vscode.window.showInformationMessage(vscode.l10n.t('"{0}" is not held back.', arg.tool));
    return false;
  }
  const change = held.change;
  if (!change) {
    void vscode.window.showWarningMessage(vscode.l10n.t('"{0}" stays held back: server "{1}" {2}.', held.name, held.server, held.reason));
    return false;
  }

  const fields = describeFields(change.changed);
  const approved = documents.add(`${held.name}.approved`, definitionText(change.pinned, change.pinnedFingerprint));
  const now = documents.add(`${held.name}.now`, definitionText(change.current, change.fingerprint));
  await vscode.commands.executeCommand('vscode.diff', approved, now, vscode.l10n.t('{0}: approved ↔ listed now', held.name), { preview: true });

  // Not modal yet, and kept open on focus loss, so the user can read the diff before deciding.
  const accept = { label: `$(check) ${vscode.l10n.t('Accept the New Definition…')}`, accept: true };
  const keep = { label: `$(circle-slash) ${vscode.l10n.t('Keep It Held Back')}`, accept: false };
  const choice = await vscode.window.showQuickPick([keep, accept], {
    title: vscode.l10n.t('Server "{0}" changed the {1} of "{2}"', held.server, fields, held.originalName),
    placeHolder: vscode.l10n.t('Read the diff, then accept the change or keep the tool held back'),
    ignoreFocusOut: true,
  });
  if (!choice?.accept) return false;

  const confirm = vscode.l10n.t('Accept Change');
  const answer = await vscode.window.showWarningMessage(
    vscode.l10n.t('Accept the changed definition of "{0}" from server "{1}"?', held.name, held.server),
    {
      modal: true,
      detail: vscode.l10n.t('The model will read the new {0} and may call the tool again. Accept only a change you trust: a tool that changes after you approved it can be a "rug pull".', fields),
    },
    confirm,
  );
  if (answer !== confirm) return false;

  const result = await service.router.acceptToolChange(held.name, change.fingerprint);
  if (!result.ok) {
    void vscode.window.showErrorMessage(result.reason);
    return false;
  }
  service.log.info(`Accepted the changed ${fields} of ${held.name} (server "${held.server}"); the tool is offered again.`);
  void vscode.window.showInformationMessage(vscode.l10n.t('"{0}" is back, with its new definition.', held.name));
  return true;
}

async function pickHeld(all: readonly HeldBackTool[]): Promise<HeldBackTool | undefined> {
  const items: HeldItem[] = all.map((held) => ({
    label: `$(warning) ${held.name}`,
    description: held.change ? vscode.l10n.t('server "{0}" changed its {1}', held.server, describeFields(held.change.changed)) : vscode.l10n.t('server "{0}"', held.server),
    detail: held.change ? String(held.change.current.description ?? '').split('\n')[0]?.slice(0, 160) : held.reason,
    held,
  }));
  return (await vscode.window.showQuickPick(items, { title: vscode.l10n.t('Review which changed tool?'), matchOnDescription: true }))?.held;
}

/** Warns once per change (per tool and definition) when a tool is held back, with a Review button. */
export function registerHeldBackNotices(service: RouterService): vscode.Disposable {
  const notified = new Set<string>();
  const off = service.router.onDidChangeHeldBackTools((all) => {
    const fresh = all.filter((h) => !notified.has(noticeKey(h)));
    if (fresh.length === 0) return;
    for (const held of fresh) {
      notified.add(noticeKey(held));
      service.log.warn(`Held back ${held.name}: server "${held.server}" ${held.reason}.`);
    }
    const first = fresh[0]!;
    const message =
      fresh.length === 1
        ? vscode.l10n.t('Server "{0}" changed the tool "{1}" since you approved it. It is held back until you review the change.', first.server, first.originalName)
        : vscode.l10n.t('{0} tools changed since you approved them. They are held back until you review the changes.', fresh.length);
    const review = vscode.l10n.t('Review');
    void vscode.window.showWarningMessage(message, review).then((pick) => {
      if (pick === review) void vscode.commands.executeCommand(COMMANDS.reviewToolChanges, fresh.length === 1 ? { tool: first.name } : undefined);
    });
  });
  return new vscode.Disposable(off);
}

function noticeKey(held: HeldBackTool): string {
  return `${held.server}\u0000${held.originalName}\u0000${held.change?.fingerprint ?? held.reason}`;
}
