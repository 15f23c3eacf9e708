import { byteLength, type ContentBlock } from './callEnvelope';

/**
 * Checks the shape of a `tools/call` result and cuts it to the server's size cap.
 */

export interface CheckedResult {
  readonly content: ContentBlock[];
  readonly structuredContent?: unknown;
  readonly isError: boolean;
}

/** Returns the checked result, or a sentence saying what is wrong with it. */
export function checkToolResult(raw: Record<string, unknown>): CheckedResult | string {
  const content = raw['content'];
  const structured = raw['structuredContent'];
  if (content === undefined && structured === undefined) return 'the result has neither "content" nor "structuredContent"';
  if (content !== undefined && !Array.isArray(content)) return `"content" must be an array, got ${typeof content}`;
  const blocks: ContentBlock[] = [];
  for (const [i, block] of ((content as unknown[] | undefined) ?? []).entries()) {
    if (typeof block !== 'object' || block === null || typeof (block as Record<string, unknown>)['type'] !== 'string') return `content[${i}] has no string "type"`;
    const b = block as ContentBlock;
    if (b.type === 'text' && typeof b['text'] !== 'string') return `content[${i}] is a text block without a string "text"`;
    blocks.push(b);
  }
  if (raw['isError'] !== undefined && typeof raw['isError'] !== 'boolean') return `"isError" must be a boolean, got ${typeof raw['isError']}`;
  return { content: blocks, ...(structured !== undefined ? { structuredContent: structured } : {}), isError: raw['isError'] === true };
}

/**
 * Room kept for the note that says the result was cut. The note names sizes and at most
 * {@link MAX_NOTED_KINDS} kinds of dropped blocks, each cut to 32 characters, so it fits in this.
 */
const CUT_NOTE_RESERVE = 512;
const MAX_NOTED_KINDS = 5;
/** JSON of `{"type":"text","text":""}`: the bytes a text block adds around its escaped text. */
const TEXT_BLOCK_OVERHEAD = 25;
/** `{"content":[]}` */
const EMPTY_RESULT_BYTES = 14;
/** `,"structuredContent":` */
const STRUCTURED_KEY_BYTES = 21;
/** The worst case of JSON escaping: one UTF-16 unit can become `\uXXXX`, six bytes. */
const MAX_JSON_BYTES_PER_UNIT = 6;

export interface CutResult {
  readonly content: ContentBlock[];
  readonly structuredContent?: unknown;
  readonly originalBytes: number;
  readonly bytes: number;
  readonly cut: boolean;
}

/**
 * Keeps a result within `limitBytes` (UTF-8 bytes of its JSON). Text is cut at the limit; blocks that do
 * not fit (images, resources) are replaced by a line naming them; structured content is kept when it takes
 * at most half the room, and dropped otherwise, since MCP asks servers to repeat it as text. A note at the end says what was cut.
 * Limits below {@link CUT_NOTE_RESERVE} cannot hold the note; the config refuses them.
 */
export function cutToSize(result: { content: ContentBlock[]; structuredContent?: unknown }, limitBytes: number): CutResult {
  const quick = quickSize(result);
  if (quick !== undefined && quick.upperBound <= limitBytes) return { ...result, originalBytes: quick.bytes, bytes: quick.bytes, cut: false };
  const originalBytes = byteLength(result);
  if (originalBytes <= limitBytes) return { ...result, originalBytes, bytes: originalBytes, cut: false };
  let budget = Math.max(0, limitBytes - CUT_NOTE_RESERVE - EMPTY_RESULT_BYTES);
  const content: ContentBlock[] = [];
  const dropped: string[] = [];
  // Small structured content is kept, and its room set aside first, so cut text cannot crowd it out.
  let structuredContent = result.structuredContent;
  if (structuredContent !== undefined) {
    const size = byteLength(structuredContent) + STRUCTURED_KEY_BYTES;
    if (size <= budget / 2) budget -= size;
    else {
      structuredContent = undefined;
      dropped.push('structuredContent');
    }
  }
  for (const block of result.content) {
    const size = byteLength(block) + 1; // + the comma before the next block
    if (size <= budget) {
      content.push(block);
      budget -= size;
      continue;
    }
    if (block.type === 'text' && typeof block['text'] === 'string' && budget > TEXT_BLOCK_OVERHEAD + 1) {
      const fitted = fitText(block, block['text'], budget - 1);
      content.push(fitted);
      budget -= byteLength(fitted) + 1;
    } else {
      dropped.push(block.type);
    }
  }
  const what = dropped.length > 0 ? ` Left out: ${summarise(dropped)}.` : '';
  content.push({ type: 'text', text: `[MCP Tool Router cut this result: the server sent ${originalBytes} bytes; the limit is ${limitBytes} (router.maxResponseBytes).${what}]` });
  const out = { content, ...(structuredContent !== undefined ? { structuredContent } : {}) };
  return { ...out, originalBytes, bytes: byteLength(out), cut: true };
}

/** The longest prefix of `text` whose block, as JSON, fits in `maxBytes` (escapes included). */
function fitText(block: ContentBlock, text: string, maxBytes: number): ContentBlock {
  let lo = 0;
  let hi = Math.min(Buffer.byteLength(text, 'utf8'), Math.max(0, maxBytes));
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (byteLength({ ...block, text: truncateUtf8(text, mid) }) <= maxBytes) lo = mid;
    else hi = mid - 1;
  }
  return { ...block, text: truncateUtf8(text, lo) };
}

/**
 * The fast path for the common all-text result, without serialising it: its exact JSON size and an upper
 * bound that needs no escape counting. Undefined when the result holds anything else; the caller then
 * measures the JSON exactly.
 */
function quickSize(result: { content: ContentBlock[]; structuredContent?: unknown }): { bytes: number; upperBound: number } | undefined {
  if (result.structuredContent !== undefined) return undefined;
  const commas = Math.max(0, result.content.length - 1);
  let bytes = EMPTY_RESULT_BYTES + commas;
  let upperBound = bytes;
  for (const block of result.content) {
    const text = block['text'];
    if (block.type !== 'text' || typeof text !== 'string' || Object.keys(block).length !== 2) return undefined;
    bytes += Buffer.byteLength(text, 'utf8') + TEXT_BLOCK_OVERHEAD + jsonEscapeBytes(text);
    upperBound += text.length * MAX_JSON_BYTES_PER_UNIT + TEXT_BLOCK_OVERHEAD;
  }
  return { bytes, upperBound };
}

/** Extra bytes JSON.stringify adds when escaping `text`: 1 for `"` `\\` and the short escapes, 5 for other control characters. */
function jsonEscapeBytes(text: string): number {
  let extra = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 || c === 0x5c || c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d) extra += 1;
    else if (c < 0x20) extra += 5;
    else if (c >= 0xd800 && c <= 0xdfff) {
      // A lone surrogate is written as \uXXXX (6 bytes) where Buffer.byteLength counts 3.
      const pair = c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
      if (pair) i++;
      else extra += 3;
    }
  }
  return extra;
}

export function truncateUtf8(text: string, maxBytes: number): string {
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= maxBytes) return text;
  let end = Math.max(0, maxBytes);
  // Step back to a character boundary (continuation bytes are 10xxxxxx).
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--;
  return buf.subarray(0, end).toString('utf8');
}

function summarise(types: readonly string[]): string {
  const counts = new Map<string, number>();
  // Block types come from the server: keep them short and plain so they cannot bloat or inject into the note.
  for (const t of types) {
    const safe = t.replace(/[^A-Za-z0-9_.-]/g, '?').slice(0, 32);
    counts.set(safe, (counts.get(safe) ?? 0) + 1);
  }
  const kinds = [...counts].map(([t, n]) => (n > 1 ? `${n} ${t} blocks` : `1 ${t} block`));
  const more = kinds.length - MAX_NOTED_KINDS;
  return kinds.slice(0, MAX_NOTED_KINDS).join(', ') + (more > 0 ? ` and ${more} more kinds` : '');
}
