import type * as vscode from 'vscode';
import { CostMonitor, type CostLimits } from '../core/guards/costMonitor';
import { RouterParticipant } from './chatParticipant';
import type { ConfigService } from './configService';
import { GatewayHost } from './gatewayHost';
import { RouterPanel } from './routerPanel';
import { RouterService } from './routerService';
import { SelectionService } from './selectionService';
import { ServerTreeProvider } from './serverCommands';
import { UsageLearning } from './usageLearning';

/** The extension's long-lived services: made once by activate(), and handed to what uses them. */
export interface ExtensionServices {
  readonly config: ConfigService;
  readonly service: RouterService;
  /** Learning from use: the use memory and its store. */
  readonly learning: UsageLearning;
  readonly selection: SelectionService;
  readonly tree: ServerTreeProvider;
  /** The cost window `@router` and sampling are charged to. */
  readonly cost: CostMonitor;
  readonly participant: RouterParticipant;
  /** The Tool Router panel's provider. */
  readonly panel: RouterPanel;
  /** The gateway served by the extension host, for agent mode and other MCP clients. */
  readonly gateway: GatewayHost;
}

/**
 * Makes the services in dependency order. Selection comes before the tree and the panel: it subscribes
 * to the tool list first, so its poisoning flags are up to date when they redraw.
 */
export function createServices(context: vscode.ExtensionContext, config: ConfigService): ExtensionServices {
  const service = new RouterService(context, config);
  config.setLog(service.log);
  const learning = new UsageLearning(context, config, service.log, (name) => service.router.getTool(name) !== undefined);
  const selection = new SelectionService(context, service, config, learning.memory);
  const tree = new ServerTreeProvider(service, () => selection.toolFlags());
  const cost = new CostMonitor(costLimits(config));
  service.clientHost.setCostMonitor(cost);
  // Read when each chat starts, so a change of loops.perTool applies from the next chat on.
  const loopOptions = () => ({ perTool: config.get('loops.perTool') });
  const participant = new RouterParticipant(service, selection, config, cost, loopOptions, learning);
  const panel = new RouterPanel(context.extensionUri, service, selection, participant, cost, config);
  const gateway = new GatewayHost(service, selection, learning, String(context.extension.packageJSON.version ?? 'dev'));
  return { config, service, learning, selection, tree, cost, participant, panel, gateway };
}

/** The cost guard's limits from the cost.* settings. */
export function costLimits(config: ConfigService): CostLimits {
  return {
    enabled: config.get('cost.enabled'),
    hourlyTokenCap: config.get('cost.hourlyTokenCap'),
    shortWindowMinutes: config.get('cost.shortWindowMinutes'),
    spikeMultiplier: config.get('cost.spikeMultiplier'),
    minimumBaselineTokensPerMinute: config.get('cost.minimumBaselineTokensPerMinute'),
  };
}
