import { describe, expect, it } from 'vitest';
import { parseApiKeys, TENANT_ID_PATTERN } from '../../src/http/api-keys.js';

describe('parseApiKeys', () => {
  it('maps <key>:<tenant> entries, several keys per tenant', () => {
    const t = parseApiKeys('k1:acme,k2:acme,k3:globex');
    expect(t.lookup('k1')).toMatchObject({ tenantId: 'acme', admin: false });
    expect(t.lookup('k2')).toMatchObject({ tenantId: 'acme', admin: false });
    expect(t.lookup('k3')).toMatchObject({ tenantId: 'globex', admin: false });
    expect(t.tenants().sort()).toEqual(['acme', 'globex']);
  });

  it('a bare (legacy) key is tenant default', () => {
    const t = parseApiKeys('k1:acme,legacy,old');
    expect(t.lookup('legacy')).toMatchObject({ tenantId: 'default', admin: false });
    expect(t.lookup('old')).toMatchObject({ tenantId: 'default', admin: false });
    expect(t.tenants().sort()).toEqual(['acme', 'default']);
  });

  it('the admin flag', () => {
    const t = parseApiKeys('root:ops:admin,k1:acme');
    expect(t.lookup('root')).toMatchObject({ tenantId: 'ops', admin: true });
    expect(t.lookup('k1')!.admin).toBe(false);
  });

  it('unknown keys, near misses and the empty key are not found', () => {
    const t = parseApiKeys('k1:acme,legacy');
    for (const k of ['', 'k', 'k11', 'K1', ' k1', 'k1:acme', 'acme', 'default', 'Legacy']) {
      expect({ k, grant: t.lookup(k) }).toEqual({ k, grant: null });
    }
  });

  it('trims entries and skips empty ones', () => {
    const t = parseApiKeys(' k1:acme , ,k2:globex,,');
    expect(t.lookup('k1')?.tenantId).toBe('acme');
    expect(t.lookup('k2')?.tenantId).toBe('globex');
  });

  it('keys are compared exactly, including non-ASCII characters', () => {
    const t = parseApiKeys('clé-ü:acme');
    expect(t.lookup('clé-ü')?.tenantId).toBe('acme');
    expect(t.lookup('cle-u')).toBeNull();
  });

  it('the same key listed twice for the same tenant is accepted', () => {
    const t = parseApiKeys('k1:acme,k1:acme');
    expect(t.lookup('k1')?.tenantId).toBe('acme');
    expect(t.tenants()).toEqual(['acme']);
  });

  it.each([
    ['', /no keys/],
    [' , ,', /no keys/],
    [':acme', /empty key/],
    ['k1:', /tenant id/],
    ['k1:bad tenant', /tenant id/],
    ['k1:a/b', /tenant id/],
    [`k1:${'t'.repeat(65)}`, /tenant id/],
    ['k1:acme:root', /flag/],
    ['k1:acme:admin:x', /separators/],
    ['k1:acme,k1:globex', /two tenants/],
  ])('rejects %j', (raw, message) => {
    expect(() => parseApiKeys(raw)).toThrow(message);
  });

  it('error messages never contain the key itself', () => {
    const secret = 'sup3r-s3cret-key';
    for (const raw of [`${secret}:bad tenant`, `${secret}:acme:root`, `${secret}:a,${secret}:b`, `${secret}:a:b:c`]) {
      let msg = '';
      try {
        parseApiKeys(raw);
      } catch (e) {
        msg = (e as Error).message;
      }
      expect(msg.length).toBeGreaterThan(0);
      expect(msg).not.toContain(secret);
    }
  });
});

describe('TENANT_ID_PATTERN', () => {
  it.each(['default', 'acme', 'ACME_2', 'a.b-c', 't'.repeat(64)])('accepts %s', (id) => {
    expect(TENANT_ID_PATTERN.test(id)).toBe(true);
  });
  it.each(['', 't'.repeat(65), 'a b', 'a/b', 'a:b', 'é'])('rejects %j', (id) => {
    expect(TENANT_ID_PATTERN.test(id)).toBe(false);
  });
});

describe('key fingerprint', () => {
  it('names a key in the audit without revealing it: sha256 prefix, stable, different per key', () => {
    const t = parseApiKeys('k1:acme,k2:acme');
    const f1 = t.lookup('k1')!.keyFingerprint!;
    expect(f1).toMatch(/^sha256:[0-9a-f]{12}$/);
    expect(f1).not.toContain('k1');
    expect(t.lookup('k1')!.keyFingerprint).toBe(f1);
    expect(t.lookup('k2')!.keyFingerprint).not.toBe(f1);
  });
});
