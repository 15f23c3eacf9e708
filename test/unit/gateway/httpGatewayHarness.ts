import { HttpGateway, type HttpGatewayOptions } from '../../../src/core/gateway/httpGateway';
import { RouterGateway } from '../../../src/core/gateway/routerGateway';
import { LexicalRanker } from '../../../src/core/selection/lexicalRanker';
import { rankableFor } from '../../../src/core/selection/toolIndex';
import { DEFAULT_SELECTION_OPTIONS, ToolSelector } from '../../../src/core/selection/toolSelector';
import { ToolRouter } from '../../../src/core/router/toolRouter';

/** One test's HTTP gateway, on a real loopback socket, over a router with no servers and a clock the test moves. */
export interface HttpGatewayHarness {
  /** The gateway's clock in ms; a test moves it to refill limits or idle sessions out. */
  clock: number;
  readonly router: ToolRouter;
  readonly gateway: HttpGateway | undefined;
  /** A selector over the router's (lexical) tool index, as the gateway's sessions use. */
  selector(): ToolSelector;
  /** Starts the gateway with `token`, this clock and `extra`; its URL. */
  start(extra?: Partial<HttpGatewayOptions>): Promise<URL>;
}

/** Registers the hooks that give each test of the calling `describe` a fresh router and clock, and close both after it. */
export function useHttpGateway(token: string): HttpGatewayHarness {
  let router: ToolRouter | undefined;
  let gateway: HttpGateway | undefined;
  const harness: HttpGatewayHarness = {
    clock: 0,
    get router() {
      return router!;
    },
    get gateway() {
      return gateway;
    },
    selector: () => new ToolSelector({ ...DEFAULT_SELECTION_OPTIONS }, { createLexical: (tools) => new LexicalRanker(tools.map(rankableFor)) }),
    start: async (extra = {}) => {
      const selector = harness.selector();
      gateway = new HttpGateway({ token, now: () => harness.clock, createGateway: () => new RouterGateway(harness.router, { selector }), ...extra });
      return gateway.start();
    },
  };

  beforeEach(() => {
    router = new ToolRouter();
    harness.clock = 1_000_000;
  });

  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
    await router?.dispose();
  });

  return harness;
}
