/**
 * The README Quickstart, executed as a user would: the server is started with the environment
 * its set-up line shows, then the shell block runs (bash, curl) against it unchanged except
 * for the port. Every command must succeed (curl --fail-with-body), and the answers must show
 * what the text promises: a decision, an accepted outcome, a webhook, then a failover.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUICKSTART_BASE, quickstartCurls, quickstartScript, quickstartServerEnv } from '../helpers/quickstart.js';
import { run } from '../helpers/run.js';
import { startServer, stopAllServers, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/until.js';

let s: TestServer;
beforeAll(async () => {
  s = await startServer({ env: quickstartServerEnv() });
  // As the README says: the commands run once GET /ready answers 200. Before that the worker
  // pool may still be warming up (on a busy machine, seconds), and the failover of step 5 would
  // wait for it past the script's `sleep 1`.
  await until('GET /ready answers 200', async () => (await s.request('GET', '/ready')).status === 200 || null, 30_000);
});
afterAll(stopAllServers);

describe('README quickstart', () => {
  it('shows an API key in the set-up line', () => {
    expect(quickstartServerEnv().SERVICE_API_KEYS).toMatch(/^\S+:\S+$/);
  });

  it('runs end to end against a started server and shows a failover', async () => {
    const script = quickstartScript();
    expect(script).toContain(QUICKSTART_BASE);
    const r = await run('bash', ['--noprofile', '--norc', '-euo', 'pipefail', '-c', script.replaceAll(QUICKSTART_BASE, s.baseUrl)], { timeoutMs: 60_000 });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const answers = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    const printed = quickstartCurls().filter((c) => c.printsAnswer);
    expect(answers).toHaveLength(printed.length);
    const byPath = (p: string) => answers[printed.findIndex((c) => c.path.startsWith(p))];
    expect(byPath('/v1/onboard').rules_created).toBe(1);
    expect(byPath('/v1/route')).toMatchObject({ rule_id: 'us_usd_card', decision_source: 'rules' });
    expect(byPath('/v1/outcome')).toEqual({ status: 'accepted', classification: 'success' });
    expect(byPath('/v1/webhooks').id).toMatch(/^wh_/);
    const health = byPath('/v1/health/');
    expect(health.primary.status).toBe('failed_over');
    expect(health.decision.processor_id).toBe('adyen_us');
    const events = byPath('/v1/failover-events');
    expect(events[0]).toMatchObject({ rule_id: 'us_usd_card', from_processor: 'stripe_us', to_processor: 'adyen_us' });
  });
});
