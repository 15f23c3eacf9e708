/**
 * The catalogues of the team-written request set (data/requests), and the split each whole catalogue
 * belongs to. A catalogue is a server: its tools are exposed as `{server}_{tool}`, as the router does.
 *
 * Splits are by whole catalogue, so held-out scores measure servers the model never saw:
 * - train: the default model trains on these requests (npm run train:model).
 * - dev: never trained on; used to choose ranking settings (server boost, clause matching, policy).
 * - test: never trained on and never tuned on; reported by npm run eval:select.
 * The OpenAPI operations of dev and test catalogues are also left out of the model's weak OpenAPI pairs.
 */
export type CatalogueSplit = 'train' | 'dev' | 'test';

export interface McpCatalogue {
  readonly server: string;
  readonly kind: 'mcp';
  /** Saved tool list in test/fixtures/catalogues/ (written by scripts/model/dumpCatalogues.ts). */
  readonly fixture: string;
  readonly split: CatalogueSplit;
  /**
   * A server of general-purpose tools (files, time, web pages, search, calculation, conversion). A user
   * has one such server per need, so each split has its own, and a split is measured with only its own
   * general servers beside every other catalogue (see generalKinds.ts).
   */
  readonly general?: boolean;
  /** The language its tools are described in, when not English (BCP 47, e.g. `zh`). */
  readonly language?: string;
}

export interface OpenApiCatalogue {
  readonly server: string;
  readonly kind: 'openapi';
  /** The `api` field of data/benchmarks/openapi/operations.jsonl.gz. */
  readonly api: string;
  readonly split: CatalogueSplit;
}

export type Catalogue = McpCatalogue | OpenApiCatalogue;

const mcp = (server: string, split: CatalogueSplit, extra: { general?: boolean; language?: string } = {}): McpCatalogue => ({ server, kind: 'mcp', fixture: `${server}.json`, split, ...extra });
const api = (server: string, source: string, split: CatalogueSplit): OpenApiCatalogue => ({ server, kind: 'openapi', api: source, split });

/**
 * Chosen for spread of domains (calendars, CRM, payroll, DNS, news, science, payments, messaging, games…)
 * and for sizes like real MCP servers' (6–45 tools). Real MCP servers are in train and test: training on
 * our own requests for real servers is legitimate, and holding two out keeps the test honest.
 */
export const CATALOGUES: readonly Catalogue[] = [
  mcp('everything', 'train'),
  mcp('memory', 'train'),
  mcp('filesystem', 'train', { general: true }),
  mcp('notion', 'test'),
  // Also the test split's browser: a user has one, so it is general-purpose since round four.
  mcp('playwright', 'test', { general: true }),

  // General-purpose servers: one per kind of need in each split.
  mcp('duckduckgo', 'train', { general: true }), // web_search (DuckDuckGo, keyless)
  mcp('fetchserver', 'train', { general: true }), // web_fetch (HTML, Markdown, text, JSON, readable article)
  mcp('sandboxfiles', 'dev', { general: true }), // file_write, file_read, file_list (sandboxed roots)
  mcp('simpletime', 'dev', { general: true }), // time_now (one tool)
  mcp('searxng', 'dev', { general: true }), // web_search, web_fetch (SearXNG search, URL reader)
  mcp('desktopcommander', 'test', { general: true }), // file_write, file_read, file_list (plus processes; reads PDFs and URLs too)
  mcp('timemcp', 'test', { general: true }), // time_now (current time, timezone conversion)
  mcp('webresearch', 'test', { general: true }), // web_search, web_fetch (Google search, page visits)
  mcp('calculator', 'test', { general: true }), // calculate (add, sub, mul, div, mod, sqrt)
  mcp('markdownify', 'test', { general: true }), // convert_document (PDF, DOCX, PPTX, XLSX → Markdown); also reads web pages and Markdown files
  // Round four: browsers for train and dev (Playwright is test's), train's clock and calculator, documents made.
  mcp('chromedevtools', 'train', { general: true }), // browser (navigate, click, fill, snapshot, screenshot; also DevTools traces)
  mcp('calctools', 'train', { general: true }), // time_now and calculate (clock, math, date arithmetic, units) among text utilities
  mcp('pdfmaker', 'train', { general: true }), // convert_document (content → PDF: documents, layouts, résumés)
  mcp('selenium', 'dev', { general: true }), // browser (a different driver and vocabulary from both other splits')
  mcp('excel', 'dev', { general: true }), // convert_document (reads and writes .xlsx workbooks)
  mcp('pptxmaker', 'test', { general: true }), // convert_document (builds .pptx decks), beside markdownify's reading direction
  // (end of general-purpose servers)

  // Servers whose tools are described in another language.
  mcp('amap', 'train', { language: 'zh' }), // AMap (Gaode) maps: geocoding, place search, routes, weather
  mcp('baidumap', 'train', { language: 'zh' }), // Baidu Maps: geocoding, places, routes, traffic (same domain as amap, so same split)
  mcp('chatwork', 'dev', { language: 'ja' }), // Chatwork team chat: rooms, messages, tasks, contacts (Japanese)
  mcp('cloudbase', 'test', { language: 'zh' }), // Tencent CloudBase backend: environments, databases, functions, hosting, storage
  mcp('howtocook', 'test', { language: 'zh' }), // HowToCook recipes: browse, look up, meal plans
  mcp('koreanlaw', 'train', { language: 'ko' }), // Korean statutes, ordinances and rulings (Korean): the first Korean catalogue, trained on
  mcp('lark', 'dev', { language: 'zh' }), // Feishu/Lark: chats, messages, docs, bitable, wiki (its own Chinese descriptions)
  mcp('freee', 'test', { language: 'ja' }), // freee accounting and HR API (Japanese): held out, unlike chatwork's Japanese in dev
  // (end of non-English servers)

  api('calendar', 'googleapis.com/calendar', 'train'),
  api('sheets', 'googleapis.com/sheets', 'train'),
  api('tasks', 'googleapis.com/tasks', 'train'),
  api('blogger', 'googleapis.com/blogger', 'train'),
  api('people', 'googleapis.com/people', 'train'),
  api('gchat', 'googleapis.com/chat', 'train'),
  api('translate', 'googleapis.com/translate', 'train'),
  api('fitness', 'googleapis.com/fitness', 'train'),
  api('youtubereports', 'googleapis.com/youtubereporting', 'train'),
  api('secrets', 'googleapis.com/secretmanager', 'train'),
  api('pubsub', 'googleapis.com/pubsub', 'train'),
  api('clouddns', 'googleapis.com/dns', 'train'),
  api('cloudbuild', 'googleapis.com/cloudbuild', 'train'),
  api('crm', 'apideck.com/crm', 'train'),
  api('hris', 'apideck.com/hris', 'train'),
  api('issues', 'apideck.com/issue-tracking', 'train'),
  api('mailscript', 'mailscript.com', 'train'),
  api('geodb', 'mashape.com/geodb', 'train'),
  api('netbox', 'netbox.dev', 'train'),
  api('qualpay', 'qualpay.com', 'train'),
  api('twiliovideo', 'twilio.com/twilio_video_v1', 'train'),
  api('payroll', 'xero.com/xero-payroll-au', 'train'),
  api('bcnews', 'gov.bc.ca/news', 'train'),
  api('iplayer', 'bbci.co.uk', 'train'),
  api('corrently', 'corrently.io', 'train'),
  api('domains', 'amazonaws.com/route53domains', 'train'),
  api('carbone', 'carbone.io', 'train'),
  api('scheduler', 'amazonaws.com/scheduler', 'train'),

  api('forms', 'googleapis.com/forms', 'dev'),
  api('keep', 'googleapis.com/keep', 'dev'),
  api('vision', 'googleapis.com/vision', 'dev'),
  api('searchconsole', 'googleapis.com/searchconsole', 'dev'),
  api('ats', 'apideck.com/ats', 'dev'),
  api('shop', 'apideck.com/ecommerce', 'dev'),
  api('baskets', 'rbaskets.in', 'dev'),
  api('holidays', 'canada-holidays.ca', 'dev'),

  api('drivelabels', 'googleapis.com/drivelabels', 'test'),
  api('appsscript', 'googleapis.com/script', 'test'),
  api('bigquery', 'googleapis.com/bigquery', 'test'),
  api('cloudrun', 'googleapis.com/run', 'test'),
  api('analytics', 'googleapis.com/analyticsdata', 'test'),
  api('playgames', 'googleapis.com/games', 'test'),
  api('filestorage', 'apideck.com/file-storage', 'test'),
  api('powerdns', 'powerdns.local', 'test'),
  api('studio', 'twilio.com/twilio_studio_v2', 'test'),
  api('opentargets', 'opentargets.io', 'test'),
  api('opa', 'openpolicy.local', 'test'),
  api('covid', 'quarantine.country', 'test'),
];

/** MCP servers whose tools are described in a language other than English (their `language`). */
export const NON_ENGLISH_SERVERS: ReadonlySet<string> = new Set(CATALOGUES.flatMap((c) => (c.kind === 'mcp' && c.language ? [c.server] : [])));
