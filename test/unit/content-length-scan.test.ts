/**
 * The header pass of content-length.ts keeps numbers and grants, not the header strings (see
 * there): it must still find exactly what a pass that keeps the strings finds. The reference
 * below is that pass: a conflict when two Content-Length values differ once trimmed, the first
 * Content-Length's value as contentLengthValue reads it, and the first X-API-Key's grant.
 */
import fc from 'fast-check';
import type { HttpRequest } from '@trufflesuite/uws-js-unofficial';
import { describe, expect, it } from 'vitest';
import { parseApiKeys } from '../../src/http/api-keys.js';
import { conflictingContentLength, contentLengthValue, scannedContentLengthValue, scannedGrant } from '../../src/http/content-length.js';

type Headers = [string, string][];

/** What uWS hands the visitor: each header, lower-cased name first, in the request's order. */
const request = (headers: Headers) => ({ forEach: (cb: (k: string, v: string) => void) => headers.forEach(([k, v]) => cb(k, v)) }) as unknown as HttpRequest;

const keys = parseApiKeys('key-acme:acme,key-globex:globex');

function reference(headers: Headers) {
  const lengths = headers.filter(([k]) => k === 'content-length').map(([, v]) => v);
  const key = headers.find(([k]) => k === 'x-api-key')?.[1];
  return {
    conflict: lengths.some((v) => v.trim() !== lengths[0].trim()),
    value: contentLengthValue(lengths[0] ?? ''),
    grant: key === undefined || key === '' ? null : keys.lookup(key),
  };
}

function scanned(headers: Headers, table = keys) {
  const conflict = conflictingContentLength(request(headers), table);
  return { conflict, value: scannedContentLengthValue(), grant: scannedGrant() };
}

const same = (a: ReturnType<typeof reference>, b: ReturnType<typeof reference>) => {
  expect(b.conflict).toBe(a.conflict);
  expect(Object.is(b.value, a.value)).toBe(true);
  expect(b.grant).toBe(a.grant);
};

describe('the Content-Length guard and its header pass', () => {
  it('flags two Content-Lengths that differ, and only those', () => {
    const cl = (...values: string[]): Headers => [['host', 'x'], ...values.map((v): [string, string] => ['content-length', v])];
    expect(scanned(cl('118', '118')).conflict).toBe(false);
    expect(scanned(cl('118', '0118')).conflict).toBe(true); // different texts, as before
    expect(scanned(cl('118', ' 118 ')).conflict).toBe(false); // trimmed alike
    expect(scanned(cl(' 118', '118')).conflict).toBe(false);
    expect(scanned(cl('118', '119')).conflict).toBe(true);
    expect(scanned(cl('118', '11')).conflict).toBe(true);
    expect(scanned(cl('1e3', '1000')).conflict).toBe(true);
    expect(scanned(cl('1e3', ' 1e3')).conflict).toBe(false);
    expect(scanned(cl('', '')).conflict).toBe(false);
    expect(scanned(cl('', '0')).conflict).toBe(true);
    expect(scanned(cl('1234567890123456', '1234567890123457')).conflict).toBe(true); // past 15 digits: compared as text
    expect(scanned(cl('118', '118', '5')).conflict).toBe(true); // a third one counts too
    expect(scanned(cl('118')).conflict).toBe(false);
  });

  it("keeps the first Content-Length's value and the first X-API-Key's grant", () => {
    expect(scanned([['content-length', '42'], ['content-length', '42']]).value).toBe(42);
    expect(scanned([['content-length', ' 7 ']]).value).toBe(7);
    expect(scanned([['host', 'x']]).value).toBe(0); // absent: '' as getHeader gives it
    expect(scanned([['x-api-key', 'key-globex'], ['x-api-key', 'key-acme']]).grant?.tenantId).toBe('globex');
    expect(scanned([['x-api-key', ''], ['x-api-key', 'key-acme']]).grant).toBeNull(); // an empty first one is not replaced
    expect(scanned([['x-api-key', 'nope']]).grant).toBeNull();
    expect(scanned([['x-api-key', 'key-acme']], null).grant).toBeNull(); // no table: nothing looked up
  });

  it('leaves nothing of one request to the next', () => {
    scanned([['content-length', 'abc'], ['x-api-key', 'key-acme']]);
    same(reference([['host', 'x']]), scanned([['host', 'x']]));
  });

  it('finds what a pass that keeps the strings finds, for any headers', () => {
    const digits = fc.stringMatching(/^[0-9]{0,18}$/);
    const spaced = fc.tuple(fc.constantFrom('', ' ', '\t'), digits, fc.constantFrom('', ' ')).map(([a, d, b]) => a + d + b);
    const value = fc.oneof(digits, spaced, fc.string({ maxLength: 8 }), fc.constantFrom('118', '0118', '1e2', '100'));
    const header = fc.oneof(
      fc.tuple(fc.constant('content-length'), value),
      fc.tuple(fc.constant('x-api-key'), fc.constantFrom('', 'key-acme', 'key-globex', 'other')),
      fc.tuple(fc.constantFrom('host', 'content-type', 'x-api-kez', 'content-lengths', 'accept'), fc.string({ maxLength: 12 })),
    );
    fc.assert(
      fc.property(fc.array(header, { maxLength: 6 }), (headers) => same(reference(headers as Headers), scanned(headers as Headers))),
      { numRuns: 2000 },
    );
  });
});
