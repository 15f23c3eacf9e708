import { LoopDetector, type LoopDetectorOptions } from '../guards/loopDetector';
import { StickyWindow } from '../selection/stickyTools';

/**
 * State that belongs to one chat conversation: its turn count, its sticky tools and its loop detector.
 * Two chats open side by side never share them, and they live here rather than in the selection engine,
 * so a settings change that rebuilds the engine keeps them. The set is bounded: past `maxChats`, the chat
 * used least recently is forgotten (a forgotten chat simply starts afresh if it comes back).
 */

/** Chats remembered at once: more than anyone keeps open, and each holds only a few turns of names. */
export const DEFAULT_MAX_CHATS = 32;

export interface ChatState {
  readonly id: string;
  /** Turns taken in this chat so far (the next turn is `turns + 1`). */
  turns: number;
  readonly sticky: StickyWindow;
  readonly loops: LoopDetector;
}

export interface ChatSessionsOptions {
  readonly maxChats?: number;
  readonly stickyLookback?: number;
  readonly stickyMax?: number;
  /** The loop detector's settings (per-tool thresholds); read each time a chat starts. */
  readonly loopOptions?: () => LoopDetectorOptions;
}

export class ChatSessions {
  private readonly chats = new Map<string, ChatState>();

  constructor(private readonly options: ChatSessionsOptions = {}) {}

  /** The chat's state, created on first use; it becomes the most recently used. */
  get(id: string): ChatState {
    let chat = this.chats.get(id);
    if (chat) this.chats.delete(id);
    else chat = { id, turns: 0, sticky: new StickyWindow(this.options.stickyLookback, this.options.stickyMax), loops: new LoopDetector(this.options.loopOptions?.() ?? {}) };
    // Map order is insertion order: re-inserting keeps the most recent last, the oldest first.
    this.chats.set(id, chat);
    const max = this.options.maxChats ?? DEFAULT_MAX_CHATS;
    while (this.chats.size > max) this.chats.delete(this.chats.keys().next().value!);
    return chat;
  }

  /** The chat's state if it is remembered, without touching it. */
  peek(id: string): ChatState | undefined {
    return this.chats.get(id);
  }

  /** The chat used last (the panel shows its loop history). */
  get latest(): ChatState | undefined {
    let last: ChatState | undefined;
    for (const chat of this.chats.values()) last = chat;
    return last;
  }

  get size(): number {
    return this.chats.size;
  }

  clear(): void {
    this.chats.clear();
  }
}

/**
 * The chat a request belongs to, from the ids this participant left in its earlier answers' metadata
 * (VS Code hands back each earlier turn's result with the chat's history); a new id when there is none.
 * Read by shape, not by class, so the stable chat API is all it needs.
 */
export function chatIdFromHistory(history: readonly unknown[], participant: string, newId: () => string): string {
  for (let i = history.length - 1; i >= 0; i--) {
    const turn = history[i] as { participant?: unknown; result?: { metadata?: { chatId?: unknown } } } | undefined;
    if (turn?.participant !== participant) continue;
    const id = turn.result?.metadata?.chatId;
    if (typeof id === 'string' && id) return id;
  }
  return newId();
}
