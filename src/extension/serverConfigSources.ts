import * as vscode from 'vscode';
import { parseMcpConfig, type InputResolver, type ParsedConfig } from '../core/config/mcpConfigParser';
import type { ConfigIssue, ServerDefinition } from '../core/config/serverConfig';
import { SETTINGS_SECTION, SETTING_DEFAULTS } from './settings';

/**
 * Where servers come from in VS Code: `.vscode/mcp.json` of every workspace folder, plus the
 * `toolRouter.servers` setting in the same format. Changes to either fire {@link onDidChange}; the owner
 * reloads without a window reload.
 */

export const SETTINGS_SOURCE_LABEL = `settings: ${SETTINGS_SECTION}.servers`;
/** Edits arrive in bursts (save, format, save); one reload per burst is enough. */
const RELOAD_DEBOUNCE_MS = 300;

export interface LoadedServers {
  readonly servers: ServerDefinition[];
  readonly issues: ConfigIssue[];
}

export class ServerConfigSources implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private readonly disposables: vscode.Disposable[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly resolveInput: InputResolver) {
    const watcher = vscode.workspace.createFileSystemWatcher('**/.vscode/mcp.json');
    const fire = (): void => this.scheduleChange();
    this.disposables.push(
      watcher,
      watcher.onDidChange(fire),
      watcher.onDidCreate(fire),
      watcher.onDidDelete(fire),
      // Saved edits in an open editor are also seen here, which covers file systems without watching.
      vscode.workspace.onDidSaveTextDocument((doc) => {
        if (doc.uri.path.endsWith('/.vscode/mcp.json')) fire();
      }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration(SETTINGS_SECTION)) fire();
      }),
      vscode.workspace.onDidChangeWorkspaceFolders(fire),
      this.changed,
    );
  }

  async load(): Promise<LoadedServers> {
    const config = vscode.workspace.getConfiguration(SETTINGS_SECTION);
    const servers: ServerDefinition[] = [];
    const issues: ConfigIssue[] = [];
    const add = (parsed: ParsedConfig): void => {
      issues.push(...parsed.issues);
      for (const s of parsed.servers) {
        const earlier = servers.find((x) => x.name === s.name);
        if (earlier) {
          issues.push({ file: s.source.file, server: s.name, severity: 'warning', message: `A server of this name is already defined in ${earlier.source.file}; this one is ignored. Rename one of them.` });
        } else servers.push(s);
      }
    };

    const folders = vscode.workspace.workspaceFolders ?? [];
    if (config.get<boolean>('readWorkspaceMcpJson', SETTING_DEFAULTS.readWorkspaceMcpJson)) {
      for (const folder of folders) {
        const uri = vscode.Uri.joinPath(folder.uri, '.vscode', 'mcp.json');
        let text: string;
        try {
          text = new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
        } catch {
          continue; // no mcp.json in this folder
        }
        add(await parseMcpConfig(text, { file: uri.fsPath, workspaceFolder: folder.uri.fsPath, resolveInput: this.resolveInput }));
      }
    }

    const fromSettings = config.get<unknown>('servers', SETTING_DEFAULTS.servers);
    if (fromSettings !== undefined && fromSettings !== null && !(typeof fromSettings === 'object' && Object.keys(fromSettings).length === 0)) {
      const asMcpJson = typeof fromSettings === 'object' && !Array.isArray(fromSettings) && ('servers' in fromSettings || 'mcpServers' in fromSettings) ? fromSettings : { servers: fromSettings };
      add(
        await parseMcpConfig(JSON.stringify(asMcpJson), {
          file: SETTINGS_SOURCE_LABEL,
          ...(folders[0] ? { workspaceFolder: folders[0].uri.fsPath } : {}),
          resolveInput: this.resolveInput,
        }),
      );
    }
    return { servers, issues };
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.disposables.forEach((d) => d.dispose());
  }

  private scheduleChange(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.changed.fire();
    }, RELOAD_DEBOUNCE_MS);
  }
}
