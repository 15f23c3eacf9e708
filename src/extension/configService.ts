import * as vscode from 'vscode';
import type { CallPolicy } from '../core/policy/callPolicy';
import { callPolicySetting, checkSetting, SETTINGS_SECTION, type ExtensionSettings } from './settingsSchema';

/**
 * The extension's one way to read its settings: typed reads, each value checked against its default's
 * type (an invalid value is logged once, and the default used), and change events per section, so a
 * change of `cost.*` reaches only what depends on the cost settings. activate() makes the one instance
 * and hands it to what reads settings.
 */
export class ConfigService implements vscode.Disposable {
  private log: vscode.LogOutputChannel | undefined;
  private readonly reported = new Set<string>();
  private readonly disposables: vscode.Disposable[] = [];

  /** Where invalid values are reported (the extension's output channel), once per key and value. */
  setLog(log: vscode.LogOutputChannel): void {
    this.log = log;
    this.reportRetired();
  }

  /**
   * Settings an earlier version had and this one no longer reads: a value someone set is said to be
   * ignored, with what replaced it, rather than silently having no effect.
   */
  private reportRetired(): void {
    const config = vscode.workspace.getConfiguration(SETTINGS_SECTION);
    for (const [key, instead] of Object.entries(RETIRED_SETTINGS)) {
      const set = config.inspect(key);
      if (set && (set.globalValue !== undefined || set.workspaceValue !== undefined || set.workspaceFolderValue !== undefined)) {
        this.log?.warn(`Settings: ${SETTINGS_SECTION}.${key} is no longer used and is ignored; ${instead}`);
      }
    }
  }

  get<K extends keyof ExtensionSettings>(key: K): ExtensionSettings[K] {
    const raw = vscode.workspace.getConfiguration(SETTINGS_SECTION).get<unknown>(key);
    const checked = checkSetting(key, raw);
    if (checked.problem) {
      const id = `${key}\u0000${JSON.stringify(raw)}`;
      if (!this.reported.has(id)) {
        this.reported.add(id);
        this.log?.warn(`Settings: ${checked.problem}`);
      }
    }
    return checked.value;
  }

  /** The call policy in force now, for every VS Code surface (selection, `@router`, Call Tool, the gateway). */
  callPolicy(): CallPolicy {
    return callPolicySetting(this.get('selection.allowDestructiveTools'), this.get('selection.allowedDestructiveTools'));
  }

  /** Calls `listener` when a setting under any of `sections` (e.g. `cost`, `selection.cap`) changes. */
  onDidChange(sections: readonly string[], listener: () => void): vscode.Disposable {
    const d = vscode.workspace.onDidChangeConfiguration((e) => {
      if (sections.some((s) => e.affectsConfiguration(`${SETTINGS_SECTION}.${s}`))) listener();
    });
    this.disposables.push(d);
    return d;
  }

  dispose(): void {
    this.disposables.forEach((d) => d.dispose());
  }
}

/** Retired settings → what to use instead. */
const RETIRED_SETTINGS: Readonly<Record<string, string>> = {
  'selection.threshold': `how many tools are sent now follows ${SETTINGS_SECTION}.selection.depth (see the README, "How many tools are sent").`,
  'selection.topK': `${SETTINGS_SECTION}.selection.cap bounds the tools sent, and ${SETTINGS_SECTION}.selection.depth decides how many below it.`,
};
