/**
 * A Lua script run by its SHA1 (EVALSHA), sent in full (EVAL) only when the server does not
 * have it cached yet (after a Redis restart, or the first call): one round trip either way
 * in the common case.
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

export class LuaScript {
  readonly sha: string;
  constructor(
    readonly lua: string,
    readonly numKeys: number,
  ) {
    this.sha = createHash('sha1').update(lua).digest('hex');
  }

  async run(r: Redis, keys: string[], args: (string | number | Buffer)[]): Promise<unknown> {
    if (keys.length !== this.numKeys) throw new Error(`script expects ${this.numKeys} keys, got ${keys.length}`);
    try {
      return await r.evalsha(this.sha, this.numKeys, ...keys, ...args);
    } catch (e) {
      if (!String((e as Error)?.message ?? e).includes('NOSCRIPT')) throw e;
      return await r.eval(this.lua, this.numKeys, ...keys, ...args);
    }
  }
}
