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

/** Room kept for the note that says the result was cut. */
const CUT_NOTE_RESERVE = 200;

export interface CutResult {
  readonly content: ContentBlock[];
  readonly structuredContent?: unknown;
  readonly originalBytes: number;
  readonly bytes: number;
  readonly cut: boolean;
}

/**
 * Keeps a result within `limitBytes` (UTF-8 bytes of its JSON). Text is cut at the limit; blocks that do
 * not fit (images, resources) are replaced by a line naming them; structured content is dropped when it
 * does not fit, since MCP asks servers to repeat it as text. A note at the end says what was cut.
 */
export function cutToSize(result: { content: ContentBlock[]; structuredContent?: unknown }, limitBytes: number): CutResult {
  const quick = quickSize(result);
  if (quick !== undefined && quick.upperBound <= limitBytes) return { ...result, originalBytes: quick.bytes, bytes: quick.bytes, cut: false };
  const originalBytes = byteLength(result);
  if (originalBytes <= limitBytes) return { ...result, originalBytes, bytes: originalBytes, cut: false };
  let budget = Math.max(0, limitBytes - CUT_NOTE_RESERVE);
  const content: ContentBlock[] = [];
  const dropped: string[] = [];
  for (const block of result.content) {
    const size = byteLength(block);
    if (size <= budget) {
      content.push(block);
      budget -= size;
      continue;
    }
    if (block.type === 'text' && typeof block['text'] === 'string' && budget > 64) {
      // JSON escaping can make text longer than its raw bytes; leave room for it.
      const text = truncateUtf8(block['text'], Math.floor((budget - 32) * 0.9));
      content.push({ ...block, text });
      budget -= byteLength({ ...block, text });
    } else {
      dropped.push(block.type);
    }
  }
  let structuredContent = result.structuredContent;
  if (structuredContent !== undefined) {
    const size = byteLength(structuredContent);
    if (size > budget) {
      structuredContent = undefined;
      dropped.push('structuredContent');
    }
  }
  const what = dropped.length > 0 ? ` Left out: ${summarise(dropped)}.` : '';
  content.push({ type: 'text', text: `[MCP Tool Router cut this result: the server sent ${originalBytes} bytes; the limit is ${limitBytes} (router.maxResponseBytes).${what}]` });
  const out = { content, ...(structuredContent !== undefined ? { structuredContent } : {}) };
  return { ...out, originalBytes, bytes: byteLength(out), cut: true };
}

/** JSON of `{"type":"text","text":""}` plus a separator: the bytes a text block adds around its text. */
const TEXT_BLOCK_OVERHEAD = 27;
/** The worst case of JSON escaping: one UTF-16 unit can become `\uXXXX`, six bytes. */
const MAX_JSON_BYTES_PER_UNIT = 6;

/**
 * The fast path for the common all-text result, without serialising it: its size (exact UTF-8 bytes of
 * the text plus block overhead, which ignores JSON escapes) and an upper bound that includes them.
 * Undefined when the result holds anything else; the caller then measures the JSON exactly.
 */
function quickSize(result: { content: ContentBlock[]; structuredContent?: unknown }): { bytes: number; upperBound: number } | undefined {
  if (result.structuredContent !== undefined) return undefined;
  let bytes = 16; // {"content":[]}
  let upperBound = 16;
  for (const block of result.content) {
    const text = block['text'];
    if (block.type !== 'text' || typeof text !== 'string' || Object.keys(block).length !== 2) return undefined;
    bytes += Buffer.byteLength(text, 'utf8') + TEXT_BLOCK_OVERHEAD;
    upperBound += text.length * MAX_JSON_BYTES_PER_UNIT + TEXT_BLOCK_OVERHEAD;
  }
  return { bytes, upperBound };
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
  for (const t of types) counts.set(t, (counts.get(t) ?? 0) + 1);
  return [...counts].map(([t, n]) => (n > 1 ? `${n} ${t} blocks` : `1 ${t} block`)).join(', ');
}
