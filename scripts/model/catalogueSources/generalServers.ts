import type { CatalogueSource } from './sourceTypes';

/**
 * Community MCP servers from npm whose tools are general-purpose (files, dates and times, web pages,
 * web search, calculation, document conversion): the tools tasks need without naming them.
 * Each is pinned to a version, lists its tools without credentials, and starts offline.
 */
export const GENERAL_SOURCES: Record<string, CatalogueSource> = {};
