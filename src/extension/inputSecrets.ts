import * as vscode from 'vscode';
import type { InputDefinition, InputResolver } from '../core/config/mcpConfigParser';

/**
 * `${input:ID}` values: asked once, then kept in VS Code's SecretStorage (the OS keychain where there is
 * one). Values are never written to settings or logs.
 */
const SECRET_PREFIX = 'toolRouter.input.';
/** The ids stored, so "Clear Saved Inputs" can remove them (SecretStorage cannot list its keys). */
const STORED_IDS_KEY = 'toolRouter.storedInputIds';

export class InputSecrets {
  /** Prompts in flight, so two config reloads at once ask the user only once. */
  private readonly asking = new Map<string, Promise<string | undefined>>();

  constructor(private readonly secrets: vscode.SecretStorage, private readonly state: vscode.Memento) {}

  readonly resolve: InputResolver = async (input: InputDefinition) => {
    const stored = await this.secrets.get(SECRET_PREFIX + input.id);
    if (stored !== undefined) return stored;
    let pending = this.asking.get(input.id);
    if (!pending) {
      pending = this.ask(input).finally(() => this.asking.delete(input.id));
      this.asking.set(input.id, pending);
    }
    return pending;
  };

  async clear(): Promise<number> {
    const ids = this.state.get<string[]>(STORED_IDS_KEY, []);
    await Promise.all(ids.map((id) => this.secrets.delete(SECRET_PREFIX + id)));
    await this.state.update(STORED_IDS_KEY, []);
    return ids.length;
  }

  /** Stores a value without asking (used by tests and by a future "Set Input" command). */
  async store(id: string, value: string): Promise<void> {
    await this.secrets.store(SECRET_PREFIX + id, value);
    const ids = new Set(this.state.get<string[]>(STORED_IDS_KEY, []));
    ids.add(id);
    await this.state.update(STORED_IDS_KEY, [...ids]);
  }

  private async ask(input: InputDefinition): Promise<string | undefined> {
    const title = vscode.l10n.t('MCP Tool Router: input "{0}"', input.id);
    let value: string | undefined;
    if (input.type === 'pickString' && input.options && input.options.length > 0) {
      value = await vscode.window.showQuickPick([...input.options], { title, placeHolder: input.description ?? input.id, ignoreFocusOut: true });
    } else {
      value = await vscode.window.showInputBox({
        title,
        prompt: input.description ?? vscode.l10n.t('Value for ${input:{0}}', input.id),
        password: input.password ?? false,
        ...(input.default !== undefined ? { value: input.default } : {}),
        ignoreFocusOut: true,
      });
    }
    if (value !== undefined) await this.store(input.id, value);
    return value;
  }
}
