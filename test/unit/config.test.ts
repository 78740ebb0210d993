import { describe, expect, it } from 'vitest';
import { hostname } from 'node:os';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('loadConfig defaults', () => {
  it('an empty environment gives the defaults', () => {
    const c = loadConfig({});
    expect(c.replicaId).toBe(`${hostname()}:8000`);
    expect(c).toEqual({
      storeUrl: null,
      cluster: 'default',
      replicaId: expect.any(String),
      port: 8000,
      host: '0.0.0.0',
      dataDir: './data',
      apiKeys: null,
      tier: 3,
      shadowMode: false,
      corsOrigins: [],
      evalIntervalMs: 5000,
      webhookAllowPrivate: false,
      webhookTimeoutMs: 10_000,
      webhookBackoffMs: [1000, 2000, 4000],
      maxBodyBytes: 64 * 1024,
      rateLimitRps: 0, // no rate limit unless asked for
      requestTimeoutMs: 10_000,
      logLevel: 'info',
      storeStartFresh: false,
      metricsToken: null,
      metricsRenderNice: 10,
      jitWarmUp: true,
      redis: null,
    });
  });

  it('empty or blank values mean "use the default"', () => {
    const c = loadConfig({
      PORT: '',
      HOST: '  ',
      SERVICE_DATA_DIR: ' ',
      SERVICE_TIER: '',
      SERVICE_SHADOW_MODE: '',
      SERVICE_EVAL_INTERVAL_MS: ' ',
      SERVICE_MAX_BODY_BYTES: '',
      SERVICE_WEBHOOK_BACKOFF_MS: '',
    });
    expect(c).toMatchObject({ port: 8000, host: '0.0.0.0', dataDir: './data', tier: 3, shadowMode: false, evalIntervalMs: 5000, apiKeys: null });
    expect(c.maxBodyBytes).toBe(65536);
    expect(c.webhookBackoffMs).toEqual([1000, 2000, 4000]);
  });
});

describe('loadConfig values', () => {
  it('reads every variable', () => {
    const c = loadConfig({
      PORT: ' 9090 ',
      HOST: '127.0.0.1',
      SERVICE_DATA_DIR: '/var/lib/routing',
      SERVICE_API_KEYS: 'k1:acme,legacy',
      SERVICE_TIER: '1',
      SERVICE_SHADOW_MODE: 'yes',
      SERVICE_CORS_ORIGINS: 'https://shop.example, http://localhost:3000 ,',
      SERVICE_EVAL_INTERVAL_MS: '250',
      SERVICE_WEBHOOK_ALLOW_PRIVATE: 'TRUE',
      SERVICE_WEBHOOK_TIMEOUT_MS: '2000',
      SERVICE_WEBHOOK_BACKOFF_MS: '10, 20,40',
      SERVICE_MAX_BODY_BYTES: '2048',
      SERVICE_LOG_LEVEL: 'WARN',
      SERVICE_STORE_URL: 'postgres://routing@db.internal:5432/routing',
      SERVICE_CLUSTER: 'eu_west_1',
      SERVICE_REPLICA_ID: 'eu-1a',
    });
    expect(c).toMatchObject({
      storeUrl: 'postgres://routing@db.internal:5432/routing',
      cluster: 'eu_west_1',
      replicaId: 'eu-1a',
      port: 9090,
      host: '127.0.0.1',
      dataDir: '/var/lib/routing',
      tier: 1,
      shadowMode: true,
      corsOrigins: ['https://shop.example', 'http://localhost:3000'],
      evalIntervalMs: 250,
      webhookAllowPrivate: true,
      webhookTimeoutMs: 2000,
      webhookBackoffMs: [10, 20, 40],
      maxBodyBytes: 2048,
      logLevel: 'warn',
    });
    expect(c.apiKeys?.lookup('k1')).toMatchObject({ tenantId: 'acme', admin: false });
    expect(c.apiKeys?.lookup('legacy')).toMatchObject({ tenantId: 'default', admin: false });
  });

  it.each(['1', '2', '3'])('SERVICE_TIER=%s', (t) => {
    expect(loadConfig({ SERVICE_TIER: t }).tier).toBe(Number(t));
  });

  it.each([
    ['1', true],
    ['true', true],
    ['on', true],
    ['Yes', true],
    ['0', false],
    ['false', false],
    ['off', false],
    ['NO', false],
  ])('SERVICE_SHADOW_MODE=%s → %s', (v, expected) => {
    expect(loadConfig({ SERVICE_SHADOW_MODE: v }).shadowMode).toBe(expected);
  });

  it('SERVICE_JIT_WARM_UP turns the start-up warm-up off, and a value that is not a boolean is refused by name', () => {
    expect(loadConfig({ SERVICE_JIT_WARM_UP: 'false' }).jitWarmUp).toBe(false);
    expect(loadConfig({ SERVICE_JIT_WARM_UP: '1' }).jitWarmUp).toBe(true);
    expect(() => loadConfig({ SERVICE_JIT_WARM_UP: 'later' })).toThrow(ConfigError);
    expect(() => loadConfig({ SERVICE_JIT_WARM_UP: 'later' })).toThrow(/SERVICE_JIT_WARM_UP/);
  });

  it('SERVICE_CORS_ORIGINS=* allows any origin', () => {
    expect(loadConfig({ SERVICE_CORS_ORIGINS: '*' }).corsOrigins).toEqual(['*']);
  });

  it('the integer bounds are inclusive', () => {
    expect(loadConfig({ PORT: '0' }).port).toBe(0);
    expect(loadConfig({ PORT: '65535' }).port).toBe(65535);
    expect(loadConfig({ SERVICE_EVAL_INTERVAL_MS: '100' }).evalIntervalMs).toBe(100);
    expect(loadConfig({ SERVICE_MAX_BODY_BYTES: '1024' }).maxBodyBytes).toBe(1024);
    expect(loadConfig({ SERVICE_MAX_BODY_BYTES: String(16 * 1024 * 1024) }).maxBodyBytes).toBe(16 * 1024 * 1024);
  });
});

describe('loadConfig rejects bad values with a ConfigError naming the variable', () => {
  it.each([
    ['PORT', 'abc'],
    ['PORT', '80.5'],
    ['PORT', '-1'],
    ['PORT', '65536'],
    ['PORT', '0x1F90'],
    ['SERVICE_TIER', '0'],
    ['SERVICE_TIER', '4'],
    ['SERVICE_TIER', 'three'],
    ['SERVICE_TIER', '3.0'],
    ['SERVICE_SHADOW_MODE', 'maybe'],
    ['SERVICE_CORS_ORIGINS', 'shop.example'],
    ['SERVICE_CORS_ORIGINS', 'https://shop.example/path'],
    ['SERVICE_CORS_ORIGINS', 'https://shop.example,ftp://files.example'],
    ['SERVICE_API_KEYS', 'k1:acme:root'],
    ['SERVICE_API_KEYS', 'k1:bad tenant'],
    ['SERVICE_API_KEYS', ':acme'],
    ['SERVICE_API_KEYS', 'k1:a:admin:x'],
    ['SERVICE_API_KEYS', 'k1:acme,k1:globex'],
    ['SERVICE_API_KEYS', ' , '],
    ['SERVICE_API_KEYS', ''], // set but empty: refused, never "no authentication"
    ['SERVICE_API_KEYS', '   '],
    ['SERVICE_RATE_LIMIT_RPS', '-5'],
    ['SERVICE_RATE_LIMIT_RPS', 'fast'],
    ['SERVICE_EVAL_INTERVAL_MS', '99'],
    ['SERVICE_EVAL_INTERVAL_MS', '600001'],
    ['SERVICE_EVAL_INTERVAL_MS', '5s'],
    ['SERVICE_WEBHOOK_ALLOW_PRIVATE', 'sure'],
    ['SERVICE_WEBHOOK_TIMEOUT_MS', '99'],
    ['SERVICE_WEBHOOK_TIMEOUT_MS', '120001'],
    ['SERVICE_WEBHOOK_BACKOFF_MS', '1000,abc'],
    ['SERVICE_WEBHOOK_BACKOFF_MS', '1.5'],
    ['SERVICE_MAX_BODY_BYTES', '1023'],
    ['SERVICE_MAX_BODY_BYTES', '1e6'],
    ['SERVICE_MAX_BODY_BYTES', String(16 * 1024 * 1024 + 1)],
    ['SERVICE_LOG_LEVEL', 'verbose'],
    ['SERVICE_STORE_URL', 'mysql://db/routing'],
    ['SERVICE_STORE_URL', 'db.internal:5432'],
    ['SERVICE_CLUSTER', 'Prod'],
    ['SERVICE_CLUSTER', '1cluster'],
    ['SERVICE_CLUSTER', 'a;drop schema public'],
    ['SERVICE_CLUSTER', 'x'.repeat(41)],
    ['SERVICE_REPLICA_ID', 'has space'],
    ['SERVICE_METRICS_RENDER_NICE', '20'],
    ['SERVICE_METRICS_RENDER_NICE', '-1'],
  ])('%s=%j', (name, value) => {
    let err: unknown;
    try {
      loadConfig({ [name]: value });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).variable).toBe(name);
    expect((err as ConfigError).message).toContain(name);
    expect((err as ConfigError).name).toBe('ConfigError');
  });

  it('the replica id defaults to host:port (the host name when listening on every address)', () => {
    expect(loadConfig({ HOST: '10.0.0.5', PORT: '8100' }).replicaId).toBe('10.0.0.5:8100');
    expect(loadConfig({ PORT: '8100' }).replicaId).toBe(`${hostname()}:8100`);
  });

  it('a bad value is reported even when other variables are fine', () => {
    expect(() => loadConfig({ PORT: '8080', SERVICE_TIER: '2', SERVICE_LOG_LEVEL: 'loud' })).toThrow(/SERVICE_LOG_LEVEL/);
  });
});
