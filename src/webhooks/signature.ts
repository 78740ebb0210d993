/** X-Service-Signature: `sha256=` + lowercase hex HMAC-SHA256 of the exact body bytes, keyed with the secret. */
import { createHmac, timingSafeEqual } from 'node:crypto';

export function sign(secret: string, body: Buffer | string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** Receiver-side check in constant time (used by the tests; the README shows the same). */
export function verify(secret: string, body: Buffer | string, header: string | undefined | null): boolean {
  if (typeof header !== 'string') return false;
  const expected = Buffer.from(sign(secret, body), 'utf8');
  const given = Buffer.from(header, 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
