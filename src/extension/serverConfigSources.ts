import { readFile } from 'node:fs/promises';
import * as vscode from 'vscode';
import type { ConfigService } from './configService';
import { parseMcpConfig, type InputResolver, type ParsedConfig } from '../core/config/mcpConfigParser';
import type { ConfigIssue, ServerDefinition } from '../core/config/serverConfig';
import { ROUTER_CONFIG_NAME } from '../core/config/takeOver';
import { SETTINGS_SECTION } from './settingsSchema';

/**
 * Where servers come from in VS Code, in this order (a name defined twice keeps its first definition):
 * - each workspace folder's `.vscode/mcp-tool-router.json` (the router's own file; servers taken over
 *   from VS Code live there) and `.vscode/mcp.json`;
 * - the user-level `mcp-tool-router.json` and `mcp.json` beside VS Code's user settings;
 * - the `toolRouter.servers` setting, in the same format.
 * Changes to any fire {@link onDidChange}; the owner reloads without a window reload.
 *
 * The user-level files are those of the default profile (`User/mcp.json`): the extension API does not
 * say which profile is active, and the user folder is found from the extension's global storage.
 */

export const SETTINGS_SOURCE_LABEL = `settings: ${SETTINGS_SECTION}.servers`;
/** Edits arrive in bursts (save, format, save); one reload per burst is enough. */
const RELOAD_DEBOUNCE_MS = 300;

export interface LoadedServers {
  readonly servers: ServerDefinition[];
  readonly issues: ConfigIssue[];
}

/** A VS Code mcp.json the router reads, which VS Code also starts servers from. */
export interface VsCodeMcpJson {
  readonly file: string;
  readonly scope: 'workspace' | 'user';
}

export class ServerConfigSources implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private readonly disposables: vscode.Disposable[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;

  /**
   * @param userFolder VS Code's user settings folder (where the user-level mcp.json lives), if known
   */
  constructor(
    private readonly config: ConfigService,
    private readonly resolveInput: InputResolver,
    private readonly userFolder?: vscode.Uri,
  ) {
    const fire = (): void => this.scheduleChange();
    const watchers = [vscode.workspace.createFileSystemWatcher(`**/.vscode/{mcp.json,${ROUTER_CONFIG_NAME}}`)];
    if (userFolder) watchers.push(vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(userFolder, `{mcp.json,${ROUTER_CONFIG_NAME}}`)));
    for (const watcher of watchers) this.disposables.push(watcher, watcher.onDidChange(fire), watcher.onDidCreate(fire), watcher.onDidDelete(fire));
    this.disposables.push(
      // Saved edits in an open editor are also seen here, which covers file systems without watching.
      vscode.workspace.onDidSaveTextDocument((doc) => {
        if (doc.uri.path.endsWith('/mcp.json') || doc.uri.path.endsWith(`/${ROUTER_CONFIG_NAME}`)) fire();
      }),
      // Only the settings that say where servers come from: a change of cost or selection reloads nothing.
      config.onDidChange(['servers', 'readWorkspaceMcpJson', 'readUserMcpJson'], fire),
      vscode.workspace.onDidChangeWorkspaceFolders(fire),
      this.changed,
    );
  }

  async load(): Promise<LoadedServers> {
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
    const files: Array<{ uri: vscode.Uri; workspaceFolder: string | undefined }> = [];
    const readVsCodeFiles = this.config.get('readWorkspaceMcpJson');
    for (const folder of folders) {
      files.push({ uri: vscode.Uri.joinPath(folder.uri, '.vscode', ROUTER_CONFIG_NAME), workspaceFolder: folder.uri.fsPath });
      if (readVsCodeFiles) files.push({ uri: vscode.Uri.joinPath(folder.uri, '.vscode', 'mcp.json'), workspaceFolder: folder.uri.fsPath });
    }
    if (this.userFolder) {
      files.push({ uri: vscode.Uri.joinPath(this.userFolder, ROUTER_CONFIG_NAME), workspaceFolder: folders[0]?.uri.fsPath });
      if (this.config.get('readUserMcpJson')) files.push({ uri: vscode.Uri.joinPath(this.userFolder, 'mcp.json'), workspaceFolder: folders[0]?.uri.fsPath });
    }
    // Read together (each read waits its turn on the extension host), parsed in order: the first definition of a name wins.
    const texts = await Promise.all(files.map(({ uri }) => readText(uri).catch(() => undefined)));
    for (const [i, { uri, workspaceFolder }] of files.entries()) {
      const text = texts[i];
      if (text === undefined) continue; // no such file
      add(await parseMcpConfig(text, { file: uri.fsPath, ...(workspaceFolder ? { workspaceFolder } : {}), resolveInput: this.resolveInput }));
    }

    const fromSettings = this.config.get('servers');
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

  /** VS Code's own mcp.json files that exist (whether or not the router reads them). */
  async vsCodeMcpJsonFiles(): Promise<VsCodeMcpJson[]> {
    const candidates: VsCodeMcpJson[] = (vscode.workspace.workspaceFolders ?? []).map((f) => ({ file: vscode.Uri.joinPath(f.uri, '.vscode', 'mcp.json').fsPath, scope: 'workspace' as const }));
    if (this.userFolder) candidates.push({ file: vscode.Uri.joinPath(this.userFolder, 'mcp.json').fsPath, scope: 'user' });
    const out: VsCodeMcpJson[] = [];
    for (const c of candidates) {
      try {
        await vscode.workspace.fs.stat(vscode.Uri.file(c.file));
        out.push(c);
      } catch {
        // not there
      }
    }
    return out;
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

/**
 * A config file's text. Files on the extension host's own disk are read directly: `workspace.fs` goes
 * through the window's process, and at start-up it waits behind every other extension's requests.
 */
async function readText(uri: vscode.Uri): Promise<string> {
  if (uri.scheme === 'file') return readFile(uri.fsPath, 'utf8');
  return new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
}
