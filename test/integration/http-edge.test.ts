/**
 * HTTP edge cases (issue 14, item 6) on raw sockets: two different Content-Length headers
 * close the connection at once (request smuggling behind a proxy that uses the last one; see
 * src/http/content-length.ts for why no 400 can be sent safely); the same value repeated is
 * accepted.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, stopAllServers, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(stopAllServers);

/** Sends raw bytes; resolves with everything read until the server closes (or 3 s pass). */
function raw(bytes: string, port = s.port): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve) => {
    const sock = connect(port, '127.0.0.1');
    let text = '';
    const timer = setTimeout(() => {
      sock.destroy();
      resolve({ text, closed: false });
    }, 3000);
    sock.on('data', (c) => (text += c.toString('latin1')));
    sock.on('close', () => {
      clearTimeout(timer);
      resolve({ text, closed: true });
    });
    sock.on('error', () => undefined);
    sock.write(bytes);
  });
}

describe('Content-Length', () => {
  const body = '{"country":"US","currency":"USD"}';
  it('two different values: the connection is closed and the smuggled request is not served', async () => {
    const rule = '{"rule_id":"smuggled","attributes":["US"],"primary_id":"a","secondary_id":"b"}';
    const smuggled = `POST /v1/rules HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${rule.length}\r\n\r\n${rule}`;
    const r = await raw(
      `POST /v1/route HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nContent-Length: ${body.length + smuggled.length}\r\n\r\n${body}${smuggled}`,
    );
    expect(r.closed).toBe(true);
    expect(r.text).toBe('');
    const rules = await s.request('GET', '/v1/rules');
    expect(rules.json).toEqual([]);
    expect((await s.request('GET', '/')).status).toBe(200);
  });

  // Every way a request can be answered before its body is read: uWS frames a body by the
  // first Content-Length whatever the method or path, so an answer given first (404, 405, a
  // preflight, a GET's) was followed by the smuggled request.
  it.each([
    ['an unknown path (404)', 'POST /v1/nothing'],
    ['a method the path does not take (405)', 'PATCH /v1/route'],
    ['a method without a body', 'GET /v1/rules'],
    ['a preflight', 'OPTIONS /v1/route'],
    ['the health check', 'GET /'],
  ])('two different values on %s: closed at once, the smuggled request not served', async (_, requestLine) => {
    const rule = '{"rule_id":"smuggled_any","attributes":["US"],"primary_id":"a","secondary_id":"b"}';
    const smuggled = `POST /v1/rules HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${rule.length}\r\n\r\n${rule}`;
    const r = await raw(`${requestLine} HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: ${2 + smuggled.length}\r\n\r\n{}${smuggled}`);
    expect(r.closed).toBe(true);
    expect(r.text).toBe('');
    expect((await s.request('GET', '/v1/rules')).json).toEqual([]);
  });

  it('the same value twice is accepted', async () => {
    const r = await raw(`POST /v1/route HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
    expect(r.text).toMatch(/^HTTP\/1\.1 404 /); // no rule: ROUTING_NO_MATCH, i.e. the request was served
    expect(r.text).toContain('ROUTING_NO_MATCH');
  });
});

describe('Content-Length with API keys on', () => {
  let keyed: TestServer;
  beforeAll(async () => {
    keyed = await startServer({ env: { SERVICE_API_KEYS: 'k1:acme' } });
  });

  it('two different values without a key (401 otherwise): closed at once, the smuggled request not served', async () => {
    const rule = '{"rule_id":"smuggled_401","attributes":["US"],"primary_id":"a","secondary_id":"b"}';
    const smuggled = `POST /v1/rules HTTP/1.1\r\nHost: x\r\nX-API-Key: k1\r\nContent-Type: application/json\r\nContent-Length: ${rule.length}\r\n\r\n${rule}`;
    const r = await raw(`POST /v1/route HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: ${2 + smuggled.length}\r\n\r\n{}${smuggled}`, keyed.port);
    expect(r.closed).toBe(true);
    expect(r.text).toBe('');
    const rules = await keyed.request('GET', '/v1/rules', undefined, { 'x-api-key': 'k1' });
    expect(rules.status).toBe(200);
    expect(rules.json).toEqual([]);
  });
});
