import os from 'node:os';
import path from 'node:path';
import type { CatalogueSource } from './sourceTypes';

/**
 * Round four: community MCP servers from npm for browser automation, the clock and calculation, document
 * creation, and three more catalogues described in Korean, Chinese and Japanese. Each is pinned to a
 * version, lists its tools without credentials (a dummy value where a server refuses to start without one)
 * and starts offline.
 *
 * Servers that keep state under the home directory (logs, a settings file) get a throw-away HOME, so that
 * a dump leaves nothing behind; npx then downloads them into that folder's own cache.
 */
const CHROME_DEVTOOLS_VERSION = '1.11.0';
const CALC_VERSION = '2.1.1';
const PDF_MAKER_VERSION = '3.2.2';
const KOREAN_LAW_VERSION = '4.14.0';
const SELENIUM_VERSION = '0.2.3';
const EXCEL_VERSION = '0.12.0';
const LARK_VERSION = '0.5.1';
const PPTX_MAKER_VERSION = '0.1.4';
const FREEE_VERSION = '0.35.2';

const THROWAWAY_HOME = { HOME: path.join(os.tmpdir(), 'mcp-tool-router-dump-home') } as const;

export const ROUND_FOUR_SOURCES: Record<string, CatalogueSource> = {
  // train
  chromedevtools: {
    command: 'npx',
    args: ['-y', `chrome-devtools-mcp@${CHROME_DEVTOOLS_VERSION}`],
    producedWith: `npx -y chrome-devtools-mcp@${CHROME_DEVTOOLS_VERSION} (Apache-2.0), stdio, usage statistics and update checks off (tools/list starts no browser)`,
    env: { CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS: '1', CHROME_DEVTOOLS_MCP_NO_UPDATE_CHECKS: '1' },
  },
  calctools: {
    command: 'npx',
    args: ['-y', `@coo-quack/calc-mcp@${CALC_VERSION}`],
    producedWith: `npx -y @coo-quack/calc-mcp@${CALC_VERSION} (MIT per its LICENSE file; package.json has no license field), stdio, no setup`,
  },
  pdfmaker: {
    command: 'npx',
    args: ['-y', `@mcp-z/mcp-pdf@${PDF_MAKER_VERSION}`],
    producedWith: `npx -y @mcp-z/mcp-pdf@${PDF_MAKER_VERSION} (MIT), stdio, a throw-away HOME (it writes logs under ~/.mcp-z)`,
    env: THROWAWAY_HOME,
  },
  koreanlaw: {
    command: 'npx',
    args: ['-y', `korean-law-mcp@${KOREAN_LAW_VERSION}`],
    producedWith: `npx -y korean-law-mcp@${KOREAN_LAW_VERSION} (MIT), stdio, no API key (only calls to the law service use one); tools described in Korean`,
  },

  // dev
  selenium: {
    command: 'npx',
    args: ['-y', `@angiejones/mcp-selenium@${SELENIUM_VERSION}`],
    producedWith: `npx -y @angiejones/mcp-selenium@${SELENIUM_VERSION} (ISC), stdio (tools/list starts no browser)`,
  },
  excel: {
    command: 'npx',
    args: ['-y', `@negokaz/excel-mcp-server@${EXCEL_VERSION}`],
    producedWith: `npx -y @negokaz/excel-mcp-server@${EXCEL_VERSION} (MIT), stdio, the server binary shipped in the package, no setup`,
  },
  lark: {
    command: 'npx',
    args: ['-y', `@larksuiteoapi/lark-mcp@${LARK_VERSION}`, 'mcp', '-a', 'dummy', '-s', 'dummy', '-l', 'zh'],
    producedWith: `npx -y @larksuiteoapi/lark-mcp@${LARK_VERSION} (MIT), stdio, its default tool set with its own Chinese descriptions (-l zh), dummy app id and secret (it refuses to start without them; tools/list never uses them), a throw-away HOME`,
    env: THROWAWAY_HOME,
  },

  // test
  pptxmaker: {
    command: 'npx',
    args: ['-y', `@pylogmonmcp/powerpoint-generator@${PPTX_MAKER_VERSION}`],
    producedWith: `npx -y @pylogmonmcp/powerpoint-generator@${PPTX_MAKER_VERSION} (MIT), stdio; it also serves its output folder (under the temporary directory) over HTTP while it runs`,
  },
  freee: {
    command: 'npx',
    args: ['-y', `freee-mcp@${FREEE_VERSION}`],
    producedWith: `npx -y freee-mcp@${FREEE_VERSION} (Apache-2.0), stdio, dummy FREEE_CLIENT_ID and FREEE_CLIENT_SECRET (it refuses to start without them; tools/list never uses them), a throw-away HOME (it writes a settings file); tools described in Japanese`,
    env: { ...THROWAWAY_HOME, FREEE_CLIENT_ID: 'dummy', FREEE_CLIENT_SECRET: 'dummy' },
  },
};
