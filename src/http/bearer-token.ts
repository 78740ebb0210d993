/** An `Authorization: Bearer <token>` check in constant time (digests compared, so lengths leak nothing). */
import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (s: string) => createHash('sha256').update(s).digest();

export class BearerToken {
  private readonly expected: Buffer;
  constructor(token: string) {
    this.expected = digest(token);
  }
  /** `header` is the raw Authorization header value ('' when absent). */
  matches(header: string): boolean {
    const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
    return timingSafeEqual(digest(m ? m[1] : ''), this.expected) && m !== null;
  }
}
