import os from 'node:os';
import type { CatalogueSource } from './sourceTypes';

/**
 * A probe: community MCP servers from npm whose catalogues are never trained on. They are saved to
 * test/fixtures/catalogues/probe/ and used only by `npm run eval:needs`, to measure whether the tool
 * model recognises general-purpose tools (files, clock, web fetch, web search, calculation, document
 * conversion, memory, commands) in servers it has never seen. Their tool labels are in data/needs/probe-tools.json.
 *
 * About two thirds are general-purpose servers; the rest are ordinary servers with many tools (GitHub, local
 * git, Slack, Kubernetes), the negatives. Each is pinned to a version, lists its tools without
 * credentials and starts offline; a dummy key is set only where a server refuses to start without one.
 *
 * `npm_config_ignore_scripts` is set for packages whose install scripts download browsers the tool list
 * never needs.
 */
const PUPPETEER_VERSION = '2025.5.12';
const BRAVE_SEARCH_VERSION = '0.6.2';
const FIRECRAWL_VERSION = '3.26.0';
const TAVILY_VERSION = '0.2.22';
const AGENT_BROWSER_VERSION = '1.2.29';
const AGENT_FILES_VERSION = '1.2.29';
const PDF_READER_VERSION = '0.3.23';
const EA_PLAYWRIGHT_VERSION = '1.0.12';
const GITHUB_VERSION = '2025.4.8';
const SLACK_VERSION = '2025.4.25';
const KUBERNETES_VERSION = '4.1.7';
const GIT_SERVER_VERSION = '2.15.3';
const MEMORY_KEEPER_VERSION = '0.14.1';
const KNOWLEDGE_GRAPH_VERSION = '1.0.7';
const SHELL_SERVER_VERSION = '2.7.1';

const NO_INSTALL_SCRIPTS = { npm_config_ignore_scripts: 'true' } as const;

export const PROBE_SOURCES: Record<string, CatalogueSource> = {
  // general-purpose
  puppeteer: {
    command: 'npx',
    args: ['-y', `@modelcontextprotocol/server-puppeteer@${PUPPETEER_VERSION}`],
    producedWith: `npx -y @modelcontextprotocol/server-puppeteer@${PUPPETEER_VERSION} (MIT), stdio, install scripts skipped (puppeteer's postinstall downloads Chrome, used only by tool calls)`,
    env: NO_INSTALL_SCRIPTS,
  },
  bravesearch: {
    command: 'npx',
    args: ['-y', `@modelcontextprotocol/server-brave-search@${BRAVE_SEARCH_VERSION}`],
    producedWith: `npx -y @modelcontextprotocol/server-brave-search@${BRAVE_SEARCH_VERSION} (MIT), stdio, dummy BRAVE_API_KEY (it refuses to start without one; tools/list never uses it)`,
    env: { BRAVE_API_KEY: 'dummy' },
  },
  firecrawl: {
    command: 'npx',
    args: ['-y', `firecrawl-mcp@${FIRECRAWL_VERSION}`],
    producedWith: `npx -y firecrawl-mcp@${FIRECRAWL_VERSION} (MIT), stdio, dummy FIRECRAWL_API_KEY (with a key it lists the tools a cloud user sees, two feedback tools more than without; tools/list never uses it)`,
    env: { FIRECRAWL_API_KEY: 'fc-dummy' },
  },
  tavily: {
    command: 'npx',
    args: ['-y', `tavily-mcp@${TAVILY_VERSION}`],
    producedWith: `npx -y tavily-mcp@${TAVILY_VERSION} (MIT), stdio, no API key (tools/list needs none)`,
  },
  agentbrowser: {
    command: 'npx',
    args: ['-y', `@agent-infra/mcp-server-browser@${AGENT_BROWSER_VERSION}`],
    producedWith: `npx -y @agent-infra/mcp-server-browser@${AGENT_BROWSER_VERSION} (MIT), stdio (tools/list starts no browser)`,
  },
  agentfiles: {
    command: 'npx',
    args: ['-y', `@agent-infra/mcp-server-filesystem@${AGENT_FILES_VERSION}`, '--allowed-directories', os.tmpdir()],
    producedWith: `npx -y @agent-infra/mcp-server-filesystem@${AGENT_FILES_VERSION} (MIT), stdio, the temporary directory as its one allowed directory (it refuses to start without one)`,
  },
  pdfreader: {
    command: 'npx',
    args: ['-y', `@sylphlab/pdf-reader-mcp@${PDF_READER_VERSION}`],
    producedWith: `npx -y @sylphlab/pdf-reader-mcp@${PDF_READER_VERSION} (MIT), stdio, no setup`,
  },
  eaplaywright: {
    command: 'npx',
    args: ['-y', `@executeautomation/playwright-mcp-server@${EA_PLAYWRIGHT_VERSION}`],
    producedWith: `npx -y @executeautomation/playwright-mcp-server@${EA_PLAYWRIGHT_VERSION} (MIT), stdio, install scripts skipped (its browser packages download Chromium, Firefox and WebKit, used only by tool calls)`,
    env: NO_INSTALL_SCRIPTS,
  },
  memorykeeper: {
    command: 'npx',
    args: ['-y', `mcp-memory-keeper@${MEMORY_KEEPER_VERSION}`],
    producedWith: `npx -y mcp-memory-keeper@${MEMORY_KEEPER_VERSION} (MIT), stdio, DATA_DIR set to the temporary directory (where it keeps its database)`,
    env: { DATA_DIR: os.tmpdir() },
  },
  knowledgegraph: {
    command: 'npx',
    args: ['-y', `@itseasy21/mcp-knowledge-graph@${KNOWLEDGE_GRAPH_VERSION}`],
    producedWith: `npx -y @itseasy21/mcp-knowledge-graph@${KNOWLEDGE_GRAPH_VERSION} (MIT), stdio, MEMORY_FILE_PATH in the temporary directory (where it keeps its graph)`,
    env: { MEMORY_FILE_PATH: `${os.tmpdir()}/knowledge-graph-probe.jsonl` },
  },
  shellserver: {
    command: 'npx',
    args: ['-y', `@mako10k/mcp-shell-server@${SHELL_SERVER_VERSION}`],
    producedWith: `npx -y @mako10k/mcp-shell-server@${SHELL_SERVER_VERSION} (MIT), stdio, no setup (tools/list runs nothing)`,
    // It writes logs/mcp_server.log where it starts.
    cwd: os.tmpdir(),
  },

  // not general-purpose (negatives)
  github: {
    command: 'npx',
    args: ['-y', `@modelcontextprotocol/server-github@${GITHUB_VERSION}`],
    producedWith: `npx -y @modelcontextprotocol/server-github@${GITHUB_VERSION} (MIT), stdio, no token (tools/list needs none)`,
  },
  slack: {
    command: 'npx',
    args: ['-y', `@modelcontextprotocol/server-slack@${SLACK_VERSION}`],
    producedWith: `npx -y @modelcontextprotocol/server-slack@${SLACK_VERSION} (MIT), stdio, dummy SLACK_BOT_TOKEN and SLACK_TEAM_ID (it refuses to start without them; tools/list never uses them)`,
    env: { SLACK_BOT_TOKEN: 'xoxb-dummy', SLACK_TEAM_ID: 'T00000000' },
  },
  kubernetes: {
    command: 'npx',
    args: ['-y', `mcp-server-kubernetes@${KUBERNETES_VERSION}`],
    producedWith: `npx -y mcp-server-kubernetes@${KUBERNETES_VERSION} (MIT), stdio, no cluster (tools/list needs none)`,
  },
  gitserver: {
    command: 'npx',
    args: ['-y', `@cyanheads/git-mcp-server@${GIT_SERVER_VERSION}`],
    producedWith: `npx -y @cyanheads/git-mcp-server@${GIT_SERVER_VERSION} (Apache-2.0), stdio, GIT_BASE_DIR set to the temporary directory (confines its git operations)`,
    env: { GIT_BASE_DIR: os.tmpdir() },
  },
};
