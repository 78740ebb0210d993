/**
 * SERVICE_API_KEYS: comma-separated entries, each one of
 *   <api_key>                 legacy form, tenant `default`
 *   <api_key>:<tenant_id>     the key's tenant
 *   <api_key>:<tenant_id>:admin   the key's tenant, and it may read every tenant (/v1/tenants)
 * Keys are looked up through a map built once at start, keyed by the raw key (no digest per
 * request: SHA-256 was ~1 µs of the route path's CPU); a hit is confirmed with a constant-time
 * comparison. A miss costs the map's string hash, which reads the whole guessed key, so how
 * much of a guessed key is right does not show in the time either way.
 */
import { hash } from 'node:crypto';

export interface KeyGrant {
  tenantId: string;
  admin: boolean;
  /** Identifies the key in the change audit without revealing it: `sha256:` + 12 hex digits of its digest. Absent in development mode. */
  keyFingerprint?: string;
}

/** A short, stable, non-reversible name for a key (computed once at start, never per request). */
export function keyFingerprint(key: string): string {
  return `sha256:${hash('sha256', key, 'hex').slice(0, 12)}`;
}

export interface ApiKeyTable {
  lookup(key: string): KeyGrant | null;
  tenants(): string[];
}

export const TENANT_ID_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

/** Compares two keys without an early exit, so the time taken says nothing about where they differ. */
function sameKey(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

export function parseApiKeys(raw: string): ApiKeyTable {
  const byKey = new Map<string, { key: string; grant: KeyGrant }>();
  const tenants = new Set<string>();
  for (const entry of raw.split(',').map((s) => s.trim()).filter(Boolean)) {
    const parts = entry.split(':');
    if (parts.length > 3) throw new Error(`entry #${byKey.size + 1} has too many ':' separators`);
    const [key, tenant = 'default', flag] = parts;
    if (!key) throw new Error(`entry #${byKey.size + 1} has an empty key`);
    if (!TENANT_ID_PATTERN.test(tenant)) {
      throw new Error(`tenant id "${tenant}" must be 1-64 characters of letters, digits, '_', '.', '-'`);
    }
    if (flag !== undefined && flag !== 'admin') throw new Error(`unknown key flag "${flag}" (only "admin")`);
    if (byKey.has(key) && byKey.get(key)!.grant.tenantId !== tenant) {
      throw new Error('the same key is mapped to two tenants');
    }
    byKey.set(key, { key, grant: { tenantId: tenant, admin: flag === 'admin', keyFingerprint: keyFingerprint(key) } });
    tenants.add(tenant);
  }
  if (byKey.size === 0) throw new Error('no keys');
  return {
    lookup(key: string): KeyGrant | null {
      const hit = byKey.get(key);
      if (hit === undefined || !sameKey(hit.key, key)) return null;
      return hit.grant;
    },
    tenants: () => [...tenants],
  };
}
