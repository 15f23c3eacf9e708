import os from 'node:os';
import type { CatalogueSource } from './sourceTypes';

/**
 * Community MCP servers from npm whose tools are general-purpose (files, dates and times, web pages,
 * web search, calculation, document conversion): the tools tasks need without naming them.
 * Each is pinned to a version, lists its tools without credentials, and starts offline.
 *
 * `npm_config_ignore_scripts` is set for packages whose install scripts fetch large extras the tool list
 * never needs (a Python venv with markitdown, a Chromium download, install telemetry).
 */
const DUCKDUCKGO_VERSION = '0.1.2';
const FETCH_SERVER_VERSION = '1.1.2';
const SANDBOX_FILES_VERSION = '1.0.0';
const SIMPLE_TIME_VERSION = '1.0.3';
const SEARXNG_VERSION = '2.4.0';
const DESKTOP_COMMANDER_VERSION = '0.2.52';
const TIME_MCP_VERSION = '1.0.6';
const WEBRESEARCH_VERSION = '0.1.7';
const CALCULATOR_VERSION = '0.2.1';
const MARKDOWNIFY_VERSION = '1.1.0';

const NO_INSTALL_SCRIPTS = { npm_config_ignore_scripts: 'true' } as const;

export const GENERAL_SOURCES: Record<string, CatalogueSource> = {
  // train
  duckduckgo: {
    command: 'npx',
    args: ['-y', `duckduckgo-mcp-server@${DUCKDUCKGO_VERSION}`],
    producedWith: `npx -y duckduckgo-mcp-server@${DUCKDUCKGO_VERSION} (MIT), stdio, no API key (scrapes DuckDuckGo only when searching)`,
  },
  fetchserver: {
    command: 'npx',
    args: ['-y', `mcp-fetch-server@${FETCH_SERVER_VERSION}`],
    producedWith: `npx -y mcp-fetch-server@${FETCH_SERVER_VERSION} (MIT), stdio, no setup`,
  },

  // dev
  sandboxfiles: {
    command: 'npx',
    args: ['-y', `@iflow-mcp/iceener-files-stdio-mcp-server@${SANDBOX_FILES_VERSION}`],
    producedWith: `npx -y @iflow-mcp/iceener-files-stdio-mcp-server@${SANDBOX_FILES_VERSION} (MIT), stdio, FS_ROOTS set to the temporary directory`,
    env: { FS_ROOTS: os.tmpdir() },
  },
  simpletime: {
    command: 'npx',
    args: ['-y', `@katomato65/time-mcp@${SIMPLE_TIME_VERSION}`],
    producedWith: `npx -y @katomato65/time-mcp@${SIMPLE_TIME_VERSION} (MIT), stdio, no setup`,
  },
  searxng: {
    command: 'npx',
    args: ['-y', `mcp-searxng@${SEARXNG_VERSION}`],
    producedWith: `npx -y mcp-searxng@${SEARXNG_VERSION} (MIT), stdio, no SEARXNG_URL (only searches use the instance; tools/list needs none)`,
  },

  // test
  desktopcommander: {
    command: 'npx',
    args: ['-y', `@wonderwhy-er/desktop-commander@${DESKTOP_COMMANDER_VERSION}`],
    producedWith: `npx -y @wonderwhy-er/desktop-commander@${DESKTOP_COMMANDER_VERSION} (MIT), stdio, install scripts skipped (install telemetry, ripgrep check); it keeps its config in ~/.claude-server-commander`,
    env: NO_INSTALL_SCRIPTS,
  },
  timemcp: {
    command: 'npx',
    args: ['-y', `time-mcp@${TIME_MCP_VERSION}`],
    producedWith: `npx -y time-mcp@${TIME_MCP_VERSION} (MIT), stdio, no setup`,
  },
  webresearch: {
    command: 'npx',
    args: ['-y', `@mzxrai/mcp-webresearch@${WEBRESEARCH_VERSION}`],
    producedWith: `npx -y @mzxrai/mcp-webresearch@${WEBRESEARCH_VERSION} (MIT), stdio, no API key, install scripts skipped (its postinstall downloads Chromium, used only by tool calls)`,
    env: NO_INSTALL_SCRIPTS,
  },
  calculator: {
    command: 'npx',
    args: ['-y', `@wrtnlabs/calculator-mcp@${CALCULATOR_VERSION}`],
    producedWith: `npx -y @wrtnlabs/calculator-mcp@${CALCULATOR_VERSION} (MIT per its LICENSE file; package.json has no license field), stdio, no setup`,
  },
  markdownify: {
    command: 'npx',
    args: ['-y', `mcp-markdownify-server@${MARKDOWNIFY_VERSION}`],
    producedWith: `npx -y mcp-markdownify-server@${MARKDOWNIFY_VERSION} (MIT), stdio, install scripts skipped (its preinstall builds a Python venv with markitdown, used only by conversions)`,
    env: NO_INSTALL_SCRIPTS,
  },
};
