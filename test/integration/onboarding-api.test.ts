/** POST /v1/onboard against the real server: generation, routing, validation, atomicity, limits. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ISO_3166_1_ALPHA2 } from '../../src/data/iso-3166-1-alpha2.js';
import { ISO_4217 } from '../../src/data/iso-4217.js';
import { startServer, stopAllServers, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startServer({ env: { SERVICE_TIER: '1' } });
});
afterAll(stopAllServers);

const proc = (processor_id: string, countries: string[], currencies: string[], extra: Record<string, unknown> = {}) => ({
  processor_id,
  name: `${processor_id[0].toUpperCase()}${processor_id.slice(1)}`,
  countries,
  currencies,
  ...extra,
});

const onboard = (body: unknown) => s.request('POST', '/v1/onboard', body);
const route = (req: Record<string, unknown>) => s.request('POST', '/v1/route', req);
const rules = async () => (await s.request('GET', '/v1/rules')).json as { rule_id: string }[];

async function expect422(body: unknown, field: string, valuePart?: string) {
  const r = await onboard(body);
  expect(r.status).toBe(422);
  expect(r.json.error.code).toBe('VALIDATION_FAILED');
  const f = (r.json.error.fields as { field: string; message: string }[]).find((x) => x.field === field);
  expect(f, `${field} in ${JSON.stringify(r.json.error.fields)}`).toBeDefined();
  if (valuePart) {
    expect(f!.message).toContain(valuePart);
    expect(r.json.error.message).toContain(valuePart);
  }
  expect(r.json.error.message).toContain(field);
}

describe('POST /v1/onboard: generation', () => {
  it('creates one rule per (country, currency, payment method) and answers 201 with the echo shape', async () => {
    const r = await onboard({
      processors: [
        proc('stripe', ['US', 'gb'], ['USD', 'gbp'], { payment_methods: ['card', 'wallet'] }),
        proc('adyen', ['us'], ['usd']),
      ],
      primary_weight: 1.0,
    });
    expect(r.status).toBe(201);
    expect(r.json.processors).toEqual(['stripe', 'adyen']);
    expect(r.json.rules_created).toBe(8);
    expect(r.json.rules.map((x: { rule_id: string }) => x.rule_id)).toEqual([
      'gb_gbp_card', 'gb_gbp_wallet', 'gb_usd_card', 'gb_usd_wallet', 'us_gbp_card', 'us_gbp_wallet', 'us_usd_card', 'us_usd_wallet',
    ]);
    expect(r.json.rules.find((x: { rule_id: string }) => x.rule_id === 'us_usd_card')).toEqual({
      rule_id: 'us_usd_card',
      attributes: ['US', 'USD', 'card'],
      primary_id: 'stripe',
      primary_name: 'Stripe',
      secondary_id: 'adyen',
      secondary_name: 'Adyen',
      primary_weight: 1.0,
    });
    // self-fallback where one processor serves the combination
    expect(r.json.rules.find((x: { rule_id: string }) => x.rule_id === 'gb_gbp_card')).toMatchObject({ primary_id: 'stripe', secondary_id: 'stripe' });
    const listed = await rules();
    expect(listed.map((x) => x.rule_id)).toEqual(expect.arrayContaining(['us_usd_card', 'gb_gbp_wallet']));
  });

  it('the generated rules route: primary first, fallback second, self-fallback to itself', async () => {
    const us = await route({ country: 'us', currency: 'usd' });
    expect(us.status).toBe(200);
    expect(us.json).toMatchObject({ rule_id: 'us_usd_card', processor_id: 'stripe', fallback_processor_id: 'adyen', decision_source: 'rules' });
    const gb = await route({ country: 'GB', currency: 'GBP', payment_method: 'wallet' });
    expect(gb.json).toMatchObject({ rule_id: 'gb_gbp_wallet', processor_id: 'stripe', fallback_processor_id: 'stripe' });
    // payment_methods defaults to ["card"]: adyen serves no US wallet, stripe alone does
    const w = await route({ country: 'US', currency: 'USD', payment_method: 'wallet' });
    expect(w.json).toMatchObject({ rule_id: 'us_usd_wallet', processor_id: 'stripe', fallback_processor_id: 'stripe' });
    expect((await route({ country: 'US', currency: 'USD', payment_method: 'bnpl' })).status).toBe(404);
    // and outcomes can be reported against them
    const o = await s.request('POST', '/v1/outcome', { rule_id: 'us_usd_card', processor_id: 'adyen', success: true, latency_ms: 120 });
    expect(o.status).toBe(202);
  });

  it('primary = lowest priority number, secondary = next; ties keep the order given; primary_weight defaults to 0.9', async () => {
    const r = await onboard({
      processors: [
        proc('p_low', ['DE'], ['EUR'], { priority: 5 }),
        proc('p_first', ['DE'], ['EUR'], { priority: 2 }),
        proc('p_second', ['DE'], ['EUR'], { priority: 2 }),
        proc('p_best', ['FR'], ['EUR'], { priority: 0 }),
        proc('p_default', ['FR'], ['EUR']),
      ],
    });
    expect(r.status).toBe(201);
    const byId = Object.fromEntries(r.json.rules.map((x: { rule_id: string }) => [x.rule_id, x]));
    expect(byId.de_eur_card).toMatchObject({ primary_id: 'p_first', secondary_id: 'p_second', primary_weight: 0.9 });
    expect(byId.fr_eur_card).toMatchObject({ primary_id: 'p_best', secondary_id: 'p_default' });
    const h = await s.request('GET', '/v1/health/de_eur_card');
    expect(h.json.decision).toMatchObject({ processor_id: 'p_first', weight: 0.9 });
  });
});

describe('POST /v1/onboard: validation (422 naming the field)', () => {
  const two = [proc('a', ['US'], ['USD']), proc('b', ['US'], ['USD'])];

  it('needs at least 2 processors', async () => {
    await expect422({ processors: [proc('a', ['US'], ['USD'])] }, 'processors');
    await expect422({ processors: [] }, 'processors');
    await expect422({}, 'processors');
  });

  it('processor ids must be unique', async () => {
    await expect422({ processors: [proc('a', ['US'], ['USD']), proc('a', ['GB'], ['GBP'])] }, 'processors[1].processor_id', '"a"');
  });

  it('countries and currencies must be real ISO codes; the message names the value and its path', async () => {
    await expect422({ processors: [two[0], proc('b', ['US', 'GB', 'ZZ'], ['USD'])] }, 'processors[1].countries[2]', '"ZZ"');
    await expect422({ processors: [two[0], proc('b', ['US'], ['USD', 'XYZ'])] }, 'processors[1].currencies[1]', '"XYZ"');
    await expect422({ processors: [proc('a', ['UK'], ['USD']), two[1]] }, 'processors[0].countries[0]', '"UK"');
    await expect422({ processors: [proc('a', ['USA'], ['USD']), two[1]] }, 'processors[0].countries[0]', '"USA"');
    await expect422({ processors: [proc('a', [], ['USD']), two[1]] }, 'processors[0].countries');
  });

  it('primary_weight must be within [0.5, 1.0]', async () => {
    await expect422({ processors: two, primary_weight: 0.49 }, 'primary_weight');
    await expect422({ processors: two, primary_weight: 1.01 }, 'primary_weight');
    await expect422({ processors: two, primary_weight: 'high' }, 'primary_weight');
  });

  it('payment methods must be card, bank_transfer, wallet or bnpl', async () => {
    await expect422({ processors: [proc('a', ['US'], ['USD'], { payment_methods: ['card', 'crypto'] }), two[1]] }, 'processors[0].payment_methods[1]', '"crypto"');
    await expect422({ processors: [proc('a', ['US'], ['USD'], { payment_methods: [] }), two[1]] }, 'processors[0].payment_methods');
  });

  it('priority must be an integer >= 0', async () => {
    await expect422({ processors: [proc('a', ['US'], ['USD'], { priority: -1 }), two[1]] }, 'processors[0].priority');
    await expect422({ processors: [proc('a', ['US'], ['USD'], { priority: 1.5 }), two[1]] }, 'processors[0].priority');
  });

  it('reports every problem at once', async () => {
    const r = await onboard({ processors: [proc('a', ['ZZ'], ['USD']), proc('a', ['US'], ['QQQ'])] });
    expect(r.status).toBe(422);
    expect(r.json.error.fields.map((f: { field: string }) => f.field)).toEqual([
      'processors[0].countries[0]',
      'processors[1].processor_id',
      'processors[1].currencies[0]',
    ]);
    expect(r.json.error.message).toContain('"QQQ"');
  });

  it('more than 10,000 generated rules is refused with a clear message, and nothing is created', async () => {
    const before = await rules();
    const countries = [...ISO_3166_1_ALPHA2]; // 250 countries × 41 currencies = 10,250 rules
    const currencies = ISO_4217.slice(0, 41);
    const r = await onboard({ processors: [proc('a', countries, currencies), proc('b', ['US'], ['USD'])] });
    expect(r.status).toBe(422);
    expect(r.json.error.code).toBe('LIMIT_EXCEEDED');
    expect(r.json.error.message).toMatch(/more than 10000 rules/);
    expect(await rules()).toEqual(before);
  });
});

describe('POST /v1/onboard: all or nothing', () => {
  it('a generated id that exists: 409 listing every conflicting id, nothing created', async () => {
    // an existing rule with a generated id, and one with a generated rule's attributes
    expect((await s.request('POST', '/v1/rules', { rule_id: 'jp_jpy_card', attributes: ['JP', 'JPY', 'card'], primary_id: 'x', secondary_id: 'y' })).status).toBe(201);
    expect((await s.request('POST', '/v1/rules', { rule_id: 'my_kr_rule', attributes: ['KR', 'KRW', 'card'], primary_id: 'x', secondary_id: 'y' })).status).toBe(201);
    const before = await rules();
    const r = await onboard({ processors: [proc('a', ['JP', 'KR', 'SG'], ['JPY', 'KRW', 'SGD']), proc('b', ['SG'], ['SGD'])] });
    expect(r.status).toBe(409);
    expect(r.json.error.code).toBe('ONBOARDING_CONFLICT');
    expect(r.json.error.message).toContain('jp_jpy_card');
    expect(r.json.error.message).toContain('kr_krw_card');
    expect(r.json.error.message).toMatch(/nothing was created/);
    expect(r.json.error.fields.map((f: { message: string }) => f.message).join(' ')).toMatch(/jp_jpy_card.*kr_krw_card/);
    expect(await rules()).toEqual(before);
    expect((await route({ country: 'SG', currency: 'SGD' })).status).toBe(404);
  });

  it('onboarding the same processors twice: the second is a 409 and changes nothing', async () => {
    const body = { processors: [proc('a', ['NZ'], ['NZD']), proc('b', ['NZ'], ['NZD'])] };
    expect((await onboard(body)).status).toBe(201);
    const before = await rules();
    const again = await onboard(body);
    expect(again.status).toBe(409);
    expect(await rules()).toEqual(before);
  });
});
