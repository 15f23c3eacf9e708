import * as vscode from 'vscode';
import { checkGiveBack, giveBack, isTakenOver, serverNamesIn, takeOver } from '../core/config/takeOver';
import type { RouterService } from './routerService';
import { describeError } from '../core/errors/describeError';

/**
 * "Route Workspace Servers Through the Router" and "Give Servers Back to VS Code" (the file work is in
 * takeOver.ts). After a take-over VS Code's mcp.json has no servers left, so VS Code starts none of them
 * and its agent mode sees the router only; the router reads them from its own file beside it.
 */

export interface TakeOverArgs {
  /** The mcp.json to act on (tests; otherwise the user picks when there are several). */
  readonly file?: string;
  /** Skip the confirmation (tests). */
  readonly confirmed?: boolean;
}

interface Candidate extends vscode.QuickPickItem {
  readonly file: string;
}

export async function takeOverServers(service: RouterService, args: TakeOverArgs = {}): Promise<readonly string[] | undefined> {
  const files = args.file ? [args.file] : (await service.vsCodeMcpJsonFiles()).map((f) => f.file).filter((f) => !isTakenOver(f));
  const candidates: Candidate[] = [];
  for (const file of files) {
    let names: string[];
    try {
      names = serverNamesIn(new TextDecoder().decode(await vscode.workspace.fs.readFile(vscode.Uri.file(file))));
    } catch (error) {
      void vscode.window.showErrorMessage(vscode.l10n.t('MCP Tool Router: {0}', describeError(error)));
      continue;
    }
    if (names.length > 0) candidates.push({ file, label: vscode.workspace.asRelativePath(file), description: names.join(', ') });
  }
  if (candidates.length === 0) {
    void vscode.window.showInformationMessage(vscode.l10n.t('MCP Tool Router: no mcp.json with servers to take over.'));
    return undefined;
  }
  const picked = candidates.length === 1 ? candidates[0] : await vscode.window.showQuickPick(candidates, { placeHolder: vscode.l10n.t('Which mcp.json should the router take over?') });
  if (!picked) return undefined;
  if (!args.confirmed) {
    const go = vscode.l10n.t('Route Through the Router');
    const answer = await vscode.window.showInformationMessage(
      vscode.l10n.t('Move the servers of {0} ({1}) into the router\'s own file beside it? VS Code will then start them only through the router. A backup is kept, and "Give Servers Back to VS Code" restores the file exactly.', picked.label, picked.description ?? ''),
      { modal: true },
      go,
    );
    if (answer !== go) return undefined;
  }
  try {
    const result = takeOver(picked.file);
    service.log.info(`Took over ${result.moved.length} server(s) from ${picked.file} into ${result.routerFile} (backup ${result.backup}).`);
    await service.reload();
    void vscode.window.showInformationMessage(vscode.l10n.t('MCP Tool Router now runs {0} for VS Code.', result.moved.join(', ')));
    return result.moved;
  } catch (error) {
    void vscode.window.showErrorMessage(vscode.l10n.t('MCP Tool Router could not take the servers over: {0}', describeError(error)));
    return undefined;
  }
}

export async function giveBackServers(service: RouterService, args: TakeOverArgs = {}): Promise<readonly string[] | undefined> {
  const files = args.file ? [args.file] : (await service.vsCodeMcpJsonFiles()).map((f) => f.file).filter(isTakenOver);
  if (files.length === 0) {
    void vscode.window.showInformationMessage(vscode.l10n.t('MCP Tool Router has taken no servers over: there is nothing to give back.'));
    return undefined;
  }
  const items: Candidate[] = files.map((file) => ({ file, label: vscode.workspace.asRelativePath(file) }));
  const picked = items.length === 1 ? items[0] : await vscode.window.showQuickPick(items, { placeHolder: vscode.l10n.t('Give back the servers of which mcp.json?') });
  if (!picked) return undefined;
  try {
    const check = checkGiveBack(picked.file);
    if (check.editedSince.length > 0 && !args.confirmed) {
      const restore = vscode.l10n.t('Restore Anyway');
      const answer = await vscode.window.showWarningMessage(
        vscode.l10n.t('{0} changed after the take-over. Giving back restores the files as they were before it, and those changes are lost.', check.editedSince.map((f) => vscode.workspace.asRelativePath(f)).join(', ')),
        { modal: true },
        restore,
      );
      if (answer !== restore) return undefined;
    }
    const result = giveBack(picked.file);
    service.log.info(`Gave ${result.restored.length} server(s) back to VS Code in ${picked.file}.`);
    await service.reload();
    void vscode.window.showInformationMessage(vscode.l10n.t('VS Code starts {0} again from its mcp.json.', result.restored.join(', ')));
    return result.restored;
  } catch (error) {
    void vscode.window.showErrorMessage(vscode.l10n.t('MCP Tool Router could not give the servers back: {0}', describeError(error)));
    return undefined;
  }
}
