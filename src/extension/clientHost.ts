import * as vscode from 'vscode';
import type { CreateMessageRequest, CreateMessageResult, ElicitRequest, ElicitResult } from '@modelcontextprotocol/client';
import { RouterOAuthProvider, type AuthStore, type AuthorizationUi, type StoredAuth } from '../core/auth/oauthProvider';
import type { ClientFeatures } from '../core/connection/clientFeatures';
import { estimateTokens, type CostMonitor } from '../core/guards/costMonitor';
import { flatFields } from '../core/schema/schemaForms';
import { askField, CANCELLED, SKIPPED } from './fieldPrompts';

/**
 * What the router's MCP client offers servers inside VS Code:
 * - **Sign-in** (OAuth): tokens and registrations in SecretStorage; connecting in the background never
 *   opens a browser, the server is listed as "needs sign-in" instead, and its Sign In action opens the
 *   authorization page with `openExternal`, the answer coming back to a loopback redirect.
 * - **Elicitation**: the server's question as one input per field (the same pickers as Call Tool's
 *   argument forms: enums and booleans as picks, defaults offered), then Send / Decline; Escape cancels.
 * - **Sampling**: a server's `sampling/createMessage` runs on a VS Code language model once the user has
 *   allowed it for that server (the answer is remembered), and its tokens are charged to the cost window.
 * - **Roots**: the workspace folders, with `list_changed` when they change.
 */

const OAUTH_SECRET_PREFIX = 'toolRouter.oauth.';
const SAMPLING_CONSENT_KEY = 'toolRouter.samplingConsent';
/** A sampling request's own limit is honoured up to this; more than a long answer is never needed from a tool. */
const MAX_SAMPLING_TOKENS = 4096;

/** The router's sign-ins, in VS Code's SecretStorage (never in settings, files or logs). */
export class SecretAuthStore implements AuthStore {
  constructor(private readonly secrets: vscode.SecretStorage) {}

  async load(key: string): Promise<StoredAuth | undefined> {
    const text = await this.secrets.get(OAUTH_SECRET_PREFIX + key);
    try {
      return text ? (JSON.parse(text) as StoredAuth) : undefined;
    } catch {
      return undefined;
    }
  }

  async save(key: string, value: StoredAuth): Promise<void> {
    await this.secrets.store(OAUTH_SECRET_PREFIX + key, JSON.stringify(value));
  }

  async delete(key: string): Promise<void> {
    await this.secrets.delete(OAUTH_SECRET_PREFIX + key);
  }
}

/** Opens authorization pages in the user's browser. */
export const BROWSER_UI: AuthorizationUi = {
  open: async (url) => {
    const opened = await vscode.env.openExternal(vscode.Uri.parse(url.href, true));
    if (!opened) throw new Error('the browser could not be opened for sign-in');
  },
};

export class VsCodeClientHost {
  readonly secrets: SecretAuthStore;
  private cost: CostMonitor | undefined;

  constructor(private readonly context: vscode.ExtensionContext, private readonly log: vscode.LogOutputChannel) {
    this.secrets = new SecretAuthStore(context.secrets);
  }

  /** The cost window sampling is charged to (set once it exists). */
  setCostMonitor(cost: CostMonitor): void {
    this.cost = cost;
  }

  features(): ClientFeatures {
    return {
      auth: (definition) => (definition.launch.type === 'stdio' ? undefined : new RouterOAuthProvider(definition.name, definition.launch.url, definition.options.oauth, this.secrets, undefined)),
      elicit: (server, params, signal) => elicitInVsCode(server, params, signal),
      sample: (server, params, signal) => this.sample(server, params, signal),
      roots: () => (vscode.workspace.workspaceFolders ?? []).map((f) => ({ uri: f.uri.toString(), name: f.name })),
      onRootsChanged: (listener) => {
        const d = vscode.workspace.onDidChangeWorkspaceFolders(() => listener());
        return () => d.dispose();
      },
    };
  }

  /** Runs a server's sampling request on a VS Code model, after the user allowed that server. */
  private async sample(server: string, params: CreateMessageRequest['params'], signal: AbortSignal): Promise<CreateMessageResult> {
    if (this.cost?.isPaused()) throw new Error(`MCP Tool Router is paused (${this.cost.pausedReason?.message ?? 'cost guard'}); the sampling request of "${server}" was not run.`);
    if (!(await this.allowSampling(server, params))) throw new Error(`The user did not allow server "${server}" to use a language model.`);
    const [model] = await vscode.lm.selectChatModels();
    if (!model) throw new Error('No language model is available in VS Code for sampling.');
    const messages = [
      ...(params.systemPrompt ? [vscode.LanguageModelChatMessage.User(params.systemPrompt)] : []),
      ...params.messages.map((m) => {
        const text = m.content && !Array.isArray(m.content) && m.content.type === 'text' ? m.content.text : JSON.stringify(m.content);
        return m.role === 'assistant' ? vscode.LanguageModelChatMessage.Assistant(text) : vscode.LanguageModelChatMessage.User(text);
      }),
    ];
    const source = new vscode.CancellationTokenSource();
    signal.addEventListener('abort', () => source.cancel(), { once: true });
    const response = await model.sendRequest(messages, { justification: vscode.l10n.t('MCP server "{0}" asked for a completion.', server), modelOptions: { maxTokens: Math.min(params.maxTokens, MAX_SAMPLING_TOKENS) } }, source.token);
    let text = '';
    for await (const part of response.text) text += part;
    const prompt = messages.map((m) => m.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : '')).join('')).join('\n');
    this.cost?.record({ promptTokens: estimateTokens(prompt), completionTokens: estimateTokens(text), tools: [] });
    this.log.info(`Sampling for "${server}" ran on ${model.name} (${text.length} characters).`);
    return { role: 'assistant', content: { type: 'text', text }, model: model.id, stopReason: 'endTurn' };
  }

  private async allowSampling(server: string, params: CreateMessageRequest['params']): Promise<boolean> {
    const remembered = this.context.globalState.get<Record<string, boolean>>(SAMPLING_CONSENT_KEY, {});
    if (remembered[server] !== undefined) return remembered[server];
    const allow = vscode.l10n.t('Allow');
    const deny = vscode.l10n.t("Don't Allow");
    const first = params.messages[0];
    const preview = first && !Array.isArray(first.content) && first.content.type === 'text' ? first.content.text.slice(0, 300) : '';
    const answer = await vscode.window.showWarningMessage(
      vscode.l10n.t('MCP server "{0}" wants to use your language model (its tokens count toward your usage). Allow it for this server?', server),
      { modal: true, detail: preview ? vscode.l10n.t('First message: {0}', preview) : undefined },
      allow,
      deny,
    );
    if (answer === undefined) return false;
    await this.context.globalState.update(SAMPLING_CONSENT_KEY, { ...remembered, [server]: answer === allow });
    return answer === allow;
  }
}

/**
 * Asks the user for what a server requested: a first question naming the server and its message (Answer /
 * Decline), then one input per field. Escape at any point cancels. Fields left empty are left out; the
 * SDK fills in their defaults (applyDefaults).
 */
export async function elicitInVsCode(server: string, params: ElicitRequest['params'], signal: AbortSignal): Promise<ElicitResult> {
  // URL mode would send the user to a page the server chose; the router does not do that.
  if (params.mode === 'url') return { action: 'decline' };
  const schema = (params as { requestedSchema?: unknown }).requestedSchema;
  const fields = flatFields(schema) ?? [];
  const source = new vscode.CancellationTokenSource();
  signal.addEventListener('abort', () => source.cancel(), { once: true });
  const answer = vscode.l10n.t('Answer');
  const decline = vscode.l10n.t('Decline');
  const first = await vscode.window.showQuickPick(
    [
      { label: `$(edit) ${answer}`, action: 'accept' as const, description: fields.length ? vscode.l10n.t('{0} field(s)', fields.length) : '' },
      { label: `$(close) ${decline}`, action: 'decline' as const },
    ],
    { title: vscode.l10n.t('MCP server "{0}" asks', server), placeHolder: params.message, ignoreFocusOut: true },
    source.token,
  );
  if (!first) return { action: 'cancel' };
  if (first.action === 'decline') return { action: 'decline' };
  const content: Record<string, unknown> = {};
  for (const [i, field] of fields.entries()) {
    const answer = await askField(`${server} (${i + 1}/${fields.length}): ${field.name}${field.required ? ' *' : ''}`, field, { token: source.token });
    if (answer === CANCELLED) return { action: 'cancel' };
    if (answer !== SKIPPED) content[field.name] = answer.value;
  }
  return { action: 'accept', content: content as ElicitResult['content'] };
}
