/**
 * Waits for `promise`, but no longer than `ms`: resolves when it settles or the time is up, whichever
 * comes first. A rejection is passed on. The timer is cleared either way, so it holds nothing alive.
 */
export async function waitAtMost(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
