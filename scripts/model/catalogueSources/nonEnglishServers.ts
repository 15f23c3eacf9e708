import type { CatalogueSource } from './sourceTypes';

/**
 * Community MCP servers from npm whose tools are described in a language other than English (mostly
 * Chinese). Each is pinned to a version, lists its tools without credentials, and starts offline.
 */
export const NON_ENGLISH_SOURCES: Record<string, CatalogueSource> = {};
