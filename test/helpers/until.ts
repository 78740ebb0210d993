/** Polls `fn` every 100 ms until it returns a truthy value, which is returned; throws naming `what` on timeout. */
export async function until<T>(what: string, fn: () => T | Promise<T>, timeoutMs = 30_000): Promise<NonNullable<T>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
