/**
 * The hot bodies' warm-up (src/http/body-warm-up.ts) must leave the body decoder compiled for
 * both hot bodies: after routes alone, V8 had compiled it for route bodies only, and the first
 * outcome (its `true`, `false`, `null`, its other fields) threw that code away and had it
 * compiled again under load (docs/performance-log.md, *Twelfth pass*, when the decoder was
 * flat-json.ts; now the plain-body decoder in front of it). The probe serves route bodies until
 * the decoder is optimised, then outcome bodies, with and without the warm-up first: without it
 * the decoder is deoptimised (so the probe can tell), with it not.
 *
 * V8 only tells through its natives syntax, in a child process, with concurrent recompilation
 * off (a function marked hot is compiled at once); the probe loads the built modules.
 */
import { describe, expect, it } from 'vitest';
import { builtModule as mod, runV8Probe } from '../helpers/v8-probe.js';

const PROBE = (warm: boolean) => `
import { Buffer } from 'node:buffer';
const status = new Function('f', 'return %GetOptimizationStatus(f)');
const OPTIMIZED = 1 << 4;
const { warmUpHotBodies } = await import(${mod('http', 'body-warm-up.js')});
const { decodeBody, mounted } = await import(${mod('http', 'decode-body.js')});
const { decodePlainBody } = await import(${mod('http', 'plain-body.js')});
const { routingEndpoints } = await import(${mod('http', 'resources', 'routing.js')});
const targets = routingEndpoints({}).map(mounted);
const route = targets.find((t) => t.ep.path === '/v1/route');
const outcome = targets.find((t) => t.ep.path === '/v1/outcome');
if (${warm}) warmUpHotBodies(targets, 65536);
const routes = ['US', 'GB', 'DE'].map((c) => Buffer.from(JSON.stringify({ country: c, currency: 'EUR', payment_method: 'card', card_type: 'visa', transaction_type: 'one_time', amount: 42 })));
for (let i = 0; i < 30000; i++) decodeBody(route, routes[i % 3], 65536);
const before = (status(decodePlainBody) & OPTIMIZED) !== 0;
const outcomes = [true, false].map((ok) => Buffer.from(JSON.stringify({ rule_id: 'r1', processor_id: 'p', success: ok, latency_ms: 120, error_code: ok ? null : 'do_not_honor' })));
for (let i = 0; i < 2; i++) decodeBody(outcome, outcomes[i], 65536);
const afterOutcomes = (status(decodePlainBody) & OPTIMIZED) !== 0;
// Keys out of the schema's order, and optional fields left out: the decoder's search past the
// expected key, which bodies in order never run.
const unordered = [{ currency: 'EUR', country: 'US' }, { country: 'US', currency: 'EUR', amount: 42 }, { amount: 42, card_type: 'visa', currency: 'EUR', country: 'FR' }];
for (const b of unordered) decodeBody(route, Buffer.from(JSON.stringify(b)), 65536);
console.log(JSON.stringify({ before, after: afterOutcomes, afterUnordered: (status(decodePlainBody) & OPTIMIZED) !== 0 }));
`;

describe('hot body warm-up and the JIT', () => {
  it('leaves the body decoder optimised through the first outcomes after routes alone, and through keys out of order', () => {
    const flags = ['--allow-natives-syntax', '--no-concurrent-recompilation'];
    expect(runV8Probe(PROBE(false), flags)).toMatchObject({ before: true, after: false });
    expect(runV8Probe(PROBE(true), flags)).toEqual({ before: true, after: true, afterUnordered: true });
  });
});
