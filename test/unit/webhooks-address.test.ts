import { describe, expect, it } from 'vitest';
import type { LookupAddress } from 'node:dns';
import { checkWebhookUrl, classifyAddress, guardedLookup, refusedHost } from '../../src/webhooks/address.js';

describe('classifyAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'shared'],
    ['100.127.255.254', 'shared'],
    ['169.254.1.1', 'link-local'],
    ['169.254.169.254', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fe80::1', 'link-local'],
    ['febf::1', 'link-local'],
    ['ff02::1', 'multicast'],
    ['fd00:ec2::254', 'metadata'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['64:ff9b::a00:1', 'private'],
    ['2002:7f00:1::1', 'loopback'],
  ])('%s is %s', (ip, cls) => {
    expect(classifyAddress(ip)).toBe(cls);
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '172.15.255.255', '100.128.0.1', '192.169.0.1', '2606:4700:4700::1111', '2a00:1450:4001::200e', '::ffff:8.8.8.8'])(
    '%s is public',
    (ip) => {
      expect(classifyAddress(ip)).toBeNull();
    },
  );
});

describe('checkWebhookUrl', () => {
  it('accepts public http(s) URLs', () => {
    expect(checkWebhookUrl('https://hooks.example.com/a?b=c', false)).toBeNull();
    expect(checkWebhookUrl('http://8.8.8.8:8080/x', false)).toBeNull();
    expect(checkWebhookUrl('https://[2606:4700:4700::1111]/x', false)).toBeNull();
  });

  it.each([
    ['', 'empty'],
    ['/relative/path', 'absolute'],
    ['example.com/hook', 'absolute'],
    ['ftp://example.com/x', 'absolute'],
    ['javascript:alert(1)', 'absolute'],
    ['https://user:pw@example.com/', 'credentials'],
    ['https://user@example.com/', 'credentials'],
    ['https://exa mple.com/', 'whitespace'],
    [' https://example.com/', 'whitespace'],
    ['https://example.com/\n', 'whitespace'],
    [`https://example.com/${'a'.repeat(2048)}`, '2048'],
  ])('refuses %j (%s)', (url, why) => {
    expect(checkWebhookUrl(url, true)).toContain(why);
  });

  it.each([
    'http://127.0.0.1/x',
    'http://127.1/x',
    'http://2130706433/x',
    'http://0x7f000001/x',
    'http://10.0.0.1/x',
    'http://172.20.1.1/x',
    'http://192.168.0.10:8080/x',
    'http://100.64.1.1/x',
    'http://[::1]/x',
    'http://[::ffff:127.0.0.1]/x',
    'http://[fd00::5]/x',
    'http://[fe80::1]/x',
    'http://169.254.169.254/latest/meta-data',
    'http://0.0.0.0/x',
    'http://localhost:3000/x',
    'http://LOCALHOST./x',
    'http://app.localhost/x',
    'http://metadata.google.internal/computeMetadata/v1/',
  ])('refuses private destination %s unless allowed', (url) => {
    expect(checkWebhookUrl(url, false)).toMatch(/refused/);
    expect(checkWebhookUrl(url, true)).toBeNull();
  });

  it('refusedHost strips brackets and trailing dots', () => {
    expect(refusedHost('[::1]')).toMatch(/loopback/);
    expect(refusedHost('localhost.')).toMatch(/loopback/);
    expect(refusedHost('example.com')).toBeNull();
  });
});

describe('guardedLookup', () => {
  const fake =
    (answers: LookupAddress[]) =>
    (_h: string, _o: unknown, cb: (err: NodeJS.ErrnoException | null, a: LookupAddress[]) => void) =>
      setImmediate(() => cb(null, answers));
  const run = (answers: LookupAddress[], all: boolean) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: unknown; family?: number }>((resolve) =>
      guardedLookup(fake(answers))('hooks.example.com', { all }, (err, address, family) => resolve({ err, address, family })),
    );

  it('fails a name that resolves only to private addresses', async () => {
    const r = await run([{ address: '127.0.0.1', family: 4 }], false);
    expect(r.err?.code).toBe('EPRIVATEADDR');
    expect(r.err?.message).toMatch(/resolves to 127\.0\.0\.1, a loopback address/);
    const r6 = await run([{ address: '::1', family: 6 }, { address: '10.1.1.1', family: 4 }], true);
    expect(r6.err?.code).toBe('EPRIVATEADDR');
  });

  it('keeps only the public answers', async () => {
    const one = await run([{ address: '10.0.0.1', family: 4 }, { address: '93.184.216.34', family: 4 }], false);
    expect(one.err).toBeNull();
    expect(one.address).toBe('93.184.216.34');
    expect(one.family).toBe(4);
    const all = await run([{ address: '169.254.169.254', family: 4 }, { address: '2606:4700::1', family: 6 }], true);
    expect(all.address).toEqual([{ address: '2606:4700::1', family: 6 }]);
  });

  it('passes resolver errors through', async () => {
    const err = Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    const r = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
      guardedLookup((_h, _o, cb) => cb(err, []))('nope.invalid', {}, (e) => resolve(e)),
    );
    expect(r?.code).toBe('ENOTFOUND');
  });
});
