/** How scripts/model/dumpCatalogues.ts starts one real MCP server to save its tool list. */
export interface CatalogueSource {
  readonly command: string;
  readonly args: readonly string[];
  /** One line for the fixture's note: the package, its version and license, the transport, any setup. */
  readonly producedWith: string;
  /** Extra environment for the server (never a credential: servers are chosen because they list tools without one). */
  readonly env?: Readonly<Record<string, string>>;
  /** Where the server runs, for one that writes files beside it (a log folder). The repository when absent. */
  readonly cwd?: string;
}
