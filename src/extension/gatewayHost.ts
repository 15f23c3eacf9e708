import * as vscode from 'vscode';
import { HttpGateway, newGatewaySecret } from '../core/gateway/httpGateway';
import { GatewayCore, type GatewaySelection } from '../core/gateway/gatewayCore';
import { ModernGateway } from '../core/gateway/modernGateway';
import { RouterGateway } from '../core/gateway/routerGateway';
import type { RouterService } from './routerService';
import type { SelectionService } from './selectionService';
import type { UsageLearning } from './usageLearning';
import { describeError } from '../core/errors/describeError';

/**
 * The router's one surface for agent mode and other clients in VS Code: the gateway, served by the
 * extension host itself over streamable HTTP on 127.0.0.1, and offered to VS Code through the MCP server
 * definition provider. It routes through the same router, selection engine, quarantine and use memory as
 * `@router`, Call Tool and the panel, so each configured server runs once and nothing is written to disk:
 * the bearer secret is made at activation and lives only in memory (and in the definition VS Code holds).
 * The routed servers' prompts (slash commands), resources (Add Context) and MCP Apps (a tool's ui://
 * page) reach VS Code through it as well.
 *
 * A gateway rather than language-model tools: VS Code's MCP support already gives an agent's tools
 * per-tool enabling, trust, confirmations and elicitation, and one gateway serves every MCP client.
 */

export const GATEWAY_PROVIDER_ID = 'toolRouter.gateway';
export const GATEWAY_LABEL = 'MCP Tool Router';

export class GatewayHost implements vscode.Disposable {
  private readonly secret = newGatewaySecret();
  private http: HttpGateway | undefined;
  /** What every client shares over the router: search, routing, the hub of resources, subscriptions and log level. */
  private core: GatewayCore | undefined;
  private modern: ModernGateway | undefined;
  private starting: Promise<URL> | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly service: RouterService,
    private readonly selection: SelectionService,
    private readonly learning?: UsageLearning,
    version = 'dev',
  ) {
    const changed = new vscode.EventEmitter<void>();
    this.disposables.push(
      changed,
      vscode.lm.registerMcpServerDefinitionProvider(GATEWAY_PROVIDER_ID, {
        onDidChangeMcpServerDefinitions: changed.event,
        provideMcpServerDefinitions: async () => {
          try {
            const url = await this.start();
            // Tools change through tools/list_changed; the version is the extension's, so an update refreshes VS Code's cache.
            return [new vscode.McpHttpServerDefinition(GATEWAY_LABEL, vscode.Uri.parse(url.href), { Authorization: `Bearer ${this.secret}` }, version)];
          } catch (error) {
            this.service.log.error(`The router gateway could not start: ${describeError(error)}`);
            return [];
          }
        },
      }),
    );
  }

  /** Starts the gateway once (a free loopback port); resolves with its URL. */
  start(): Promise<URL> {
    this.starting ??= (async () => {
      await this.selection.getEngine();
      // Read at each use: a settings change rebuilds the engine, and open sessions follow it.
      const selection = this.selection;
      const live: GatewaySelection = {
        get selector() {
          return selection.current().selector;
        },
        get index() {
          return selection.current().index;
        },
        quarantine: () => selection.quarantinedTools(),
      };
      const core = (this.core = new GatewayCore(this.service.router, live, {
        dynamicSubset: true,
        // SelectionService keeps the catalogue in step for every client.
        syncCatalogue: false,
        log: (m) => this.service.log.info(`gateway: ${m}`),
        ...(this.learning ? { onSearch: (q: string, tools: readonly string[]) => this.learning!.noteSearch(q, tools), onCall: (name: string) => this.learning!.noteAgentCall(name) } : {}),
      }));
      this.modern = new ModernGateway(core);
      this.http = new HttpGateway({
        token: this.secret,
        createGateway: () => new RouterGateway(core),
        modern: this.modern,
        log: (m) => this.service.log.info(m),
      });
      return this.http.start();
    })();
    return this.starting;
  }

  /** For the extension-host tests, which connect as another client would: the URL and the secret. */
  async connection(): Promise<{ url: URL; secret: string }> {
    return { url: await this.start(), secret: this.secret };
  }

  get sessionCount(): number {
    return this.http?.sessionCount ?? 0;
  }

  dispose(): void {
    void this.http?.close();
    this.modern?.dispose();
    this.core?.dispose();
    this.disposables.forEach((d) => d.dispose());
  }
}
