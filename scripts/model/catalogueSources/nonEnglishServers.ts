import type { CatalogueSource } from './sourceTypes';

/**
 * Community MCP servers from npm whose tools are described in a language other than English (mostly
 * Chinese). Each is pinned to a version, lists its tools without credentials, and starts offline.
 */
const HOWTOCOOK_VERSION = '0.2.2';
const AMAP_VERSION = '0.0.8';
const BAIDU_MAP_VERSION = '1.0.5';
const CLOUDBASE_VERSION = '2.34.6';
const CHATWORK_VERSION = '0.0.4';

export const NON_ENGLISH_SOURCES: Record<string, CatalogueSource> = {
  howtocook: {
    command: 'npx',
    args: ['-y', `howtocook-mcp@${HOWTOCOOK_VERSION}`],
    producedWith: `npx -y howtocook-mcp@${HOWTOCOOK_VERSION} (ISC), stdio, no setup (recipes are bundled)`,
  },
  amap: {
    command: 'npx',
    args: ['-y', `@amap/amap-maps-mcp-server@${AMAP_VERSION}`],
    producedWith: `npx -y @amap/amap-maps-mcp-server@${AMAP_VERSION} (ISC), stdio, dummy AMAP_MAPS_API_KEY (it refuses to start without one; tools/list never uses it)`,
    env: { AMAP_MAPS_API_KEY: 'dummy' },
  },
  baidumap: {
    command: 'npx',
    args: ['-y', `@baidumap/mcp-server-baidu-map@${BAIDU_MAP_VERSION}`],
    producedWith: `npx -y @baidumap/mcp-server-baidu-map@${BAIDU_MAP_VERSION} (MIT), stdio, dummy BAIDU_MAP_API_KEY (it refuses to start without one; tools/list never uses it)`,
    env: { BAIDU_MAP_API_KEY: 'dummy' },
  },
  cloudbase: {
    command: 'npx',
    args: ['-y', `@cloudbase/cloudbase-mcp@${CLOUDBASE_VERSION}`],
    producedWith: `npx -y @cloudbase/cloudbase-mcp@${CLOUDBASE_VERSION} (MIT), stdio, not logged in (tools/list needs no account)`,
  },
  chatwork: {
    command: 'npx',
    args: ['-y', `@chatwork/mcp-server@${CHATWORK_VERSION}`],
    producedWith: `npx -y @chatwork/mcp-server@${CHATWORK_VERSION} (MIT), stdio, no token (tools/list needs none); tools described in Japanese`,
  },
};
