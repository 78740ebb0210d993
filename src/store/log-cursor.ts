/**
 * Log cursor keys, "<atMs>-<seq>", as returned by Log.newest and taken back as `before`:
 * opaque to clients, the same shape for every store (LMDB's seq is a per-process counter,
 * PostgreSQL's a cluster-wide sequence number).
 */
export function encodeLogKey(atMs: number, seq: number): string {
  return `${atMs}-${seq}`;
}

export function decodeLogKey(k: string): [number, number] | null {
  const m = /^(\d{1,16})-(\d{1,15})$/.exec(k);
  return m ? [Number(m[1]), Number(m[2])] : null;
}

export function isLogCursor(k: string): boolean {
  return decodeLogKey(k) !== null;
}
