/**
 * The front thread's warm-up of the hot bodies' decoding (src/http/body-warm-up.ts): the bodies
 * it decodes are the hot endpoints' own examples, a variant holding the other literals
 * (negated booleans, nulls where the schema takes them) and one with long numbers, each accepted by the endpoint and in
 * the flat form the hot path parses; nothing but decoding happens.
 */
import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { BODY_WARM_UP_ROUNDS, warmUpBodies, warmUpHotBodies } from '../../src/http/body-warm-up.js';
import { decodeBody, mounted } from '../../src/http/decode-body.js';
import { parseFlatJson } from '../../src/http/flat-json.js';
import { routingEndpoints } from '../../src/http/resources/routing.js';

// The handlers are never called: only the endpoints' schemas and examples are used.
const targets = routingEndpoints({} as AppContext).map(mounted);
const byPath = (path: string) => targets.find((t) => t.ep.path === path)!;

describe('hot body warm-up', () => {
  it("decodes each hot endpoint's example, a variant with the other literals, the example with its keys reversed and with long numbers", () => {
    const outcome = warmUpBodies(byPath('/v1/outcome'));
    expect(outcome).toHaveLength(4);
    expect(Object.keys(outcome[2] as object)).toEqual(Object.keys(outcome[0] as object).reverse());
    expect(outcome[2]).toEqual(outcome[0]);
    expect(outcome[1]).toMatchObject({ success: !(outcome[0] as { success: boolean }).success, error_code: null });
    const route = warmUpBodies(byPath('/v1/route'));
    expect(route[1]).toMatchObject({ amount: null, country: (route[0] as { country: string }).country });
    // More significant digits than the decoder's quotient takes: the text conversion is warmed too.
    for (const body of [route[3], outcome[3]]) {
      const numbers = Object.values(body as object).filter((v) => typeof v === 'number');
      expect(numbers.length).toBeGreaterThan(0);
      for (const n of numbers) expect(String(n).replace('.', '').replace(/^0+/, '').length).toBeGreaterThan(15);
    }
    for (const t of targets) {
      for (const body of warmUpBodies(t)) {
        const bytes = Buffer.from(JSON.stringify(body));
        expect(parseFlatJson(bytes, t.flat!)).toEqual(body); // the flat form: the parser the warm-up is for
        expect(decodeBody(t, bytes, 65536)).toEqual(body); // accepted as it stands
      }
    }
  });

  it('decodes every body the given number of rounds, and skips endpoints off the flat path', () => {
    const report = warmUpHotBodies([...targets, mounted({ ...targets[0].ep, flatBody: undefined })], 65536, 3);
    expect(report.decodes).toBe(3 * 8);
    expect(warmUpHotBodies(targets, 65536).decodes).toBe(BODY_WARM_UP_ROUNDS * 8);
  });
});
