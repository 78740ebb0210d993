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
function raw(bytes: string): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve) => {
    const sock = connect(s.port, '127.0.0.1');
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

  it('the same value twice is accepted', async () => {
    const r = await raw(`POST /v1/route HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
    expect(r.text).toMatch(/^HTTP\/1\.1 404 /); // no rule: ROUTING_NO_MATCH, i.e. the request was served
    expect(r.text).toContain('ROUTING_NO_MATCH');
  });
});
