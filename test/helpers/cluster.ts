/**
 * Several replicas of the real service in one cluster (SERVICE_REDIS_URL), a traffic driver
 * that spreads requests over them round-robin, and a webhook receiver that counts deliveries.
 */
import { createServer, type Server } from 'node:http';
import { expect } from 'vitest';
import { startServer, type TestServer } from './server.js';

export interface Replica extends TestServer {
  id: string;
}

export interface ClusterOptions {
  redisUrl: string;
  cluster: string;
  replicas: number;
  env?: Record<string, string | undefined>;
}

/** Fast timings for tests: 1.5 s lease, 100 ms batches, 500 ms cycles. */
export const FAST_CLUSTER_ENV = {
  SERVICE_TIER: '1',
  SERVICE_EVAL_INTERVAL_MS: '500',
  SERVICE_CLUSTER_LEASE_MS: '1500',
  SERVICE_CLUSTER_SHIP_INTERVAL_MS: '100',
  SERVICE_CLUSTER_HEAL_MS: '500',
  SERVICE_WEBHOOK_ALLOW_PRIVATE: 'true',
  SERVICE_WEBHOOK_BACKOFF_MS: '200,400',
};

export async function startReplica(o: ClusterOptions, id: string): Promise<Replica> {
  const s = await startServer({
    env: { ...FAST_CLUSTER_ENV, SERVICE_REDIS_URL: o.redisUrl, SERVICE_CLUSTER: o.cluster, SERVICE_REPLICA_ID: id, ...o.env },
  });
  return Object.assign(s, { id });
}

export async function startReplicas(o: ClusterOptions): Promise<Replica[]> {
  const out: Replica[] = [];
  // One at a time: a busy 2-core machine starts them faster in turn than all at once.
  for (let i = 1; i <= o.replicas; i++) out.push(await startReplica(o, `r${i}`));
  return out;
}

export const rule = (id: string, country: string) => ({
  rule_id: id,
  attributes: [country, 'USD', 'card'],
  primary_id: 'stripe',
  primary_name: 'Stripe',
  secondary_id: 'adyen',
  secondary_name: 'Adyen',
  primary_weight: 0.9,
});

/** With Redis alone each replica keeps its own configuration: create the rule everywhere. */
export async function createEverywhere(replicas: Replica[], path: string, body: unknown): Promise<void> {
  for (const r of replicas) {
    const res = await r.request('POST', path, body);
    expect(res.status, `${r.id}: ${res.text}`).toBe(201);
  }
}

export interface ClusterView {
  role: 'leader' | 'follower' | 'fallback';
  leader: boolean;
  epoch: number;
  replica_id: string;
  leader_id: string | null;
  table_age_seconds: number | null;
}

export async function clusterView(r: Replica): Promise<ClusterView> {
  const res = await r.request('GET', '/');
  return res.json.leadership as ClusterView;
}

export async function primaryStatus(r: Replica, ruleId: string): Promise<string> {
  const h = await r.request('GET', `/v1/health/${ruleId}`);
  return h.json?.primary?.status;
}

/** Outcomes (and routes) at `rate` per second, round-robin over `targets()` (re-read each tick). */
export class Traffic {
  sent = 0;
  routes = 0;
  failedRoutes: string[] = [];
  failedOutcomes: string[] = [];
  private timer: ReturnType<typeof setInterval> | undefined;
  private i = 0;
  private inflight = new Set<Promise<void>>();
  /** What the next outcomes report for the primary. */
  failing = false;

  constructor(
    private readonly targets: () => Replica[],
    private readonly ruleId: string,
    private readonly country: string,
    private readonly rate: number,
    private readonly withRoutes = true,
  ) {}

  start(): void {
    const period = 1000 / this.rate;
    let next = performance.now();
    this.timer = setInterval(() => {
      // Catch up on ticks a busy event loop delayed, so the rate holds.
      const now = performance.now();
      while (next <= now) {
        next += period;
        this.tick();
      }
    }, Math.max(5, Math.floor(period / 2)));
  }

  private tick(): void {
    const ts = this.targets();
    if (ts.length === 0) return;
    const r = ts[this.i++ % ts.length];
    const body = this.failing
      ? { rule_id: this.ruleId, processor_id: 'stripe', success: false, latency_ms: 80, error_code: 'processor_unavailable' }
      : { rule_id: this.ruleId, processor_id: 'stripe', success: true, latency_ms: 120 };
    this.sent++;
    this.track(
      r.request('POST', '/v1/outcome', body).then(
        (res) => {
          if (res.status !== 202) this.failedOutcomes.push(`${r.id}: ${res.status}`);
        },
        (e) => void this.failedOutcomes.push(`${r.id}: ${describe(e)}`),
      ),
    );
    if (this.withRoutes) {
      this.routes++;
      this.track(
        r.request('POST', '/v1/route', { country: this.country, currency: 'USD', payment_method: 'card', amount: 10 }).then(
          (res) => {
            if (res.status !== 200) this.failedRoutes.push(`${r.id}: ${res.status} ${res.text.slice(0, 200)}`);
          },
          (e) => void this.failedRoutes.push(`${r.id}: ${describe(e)}`),
        ),
      );
    }
  }

  private track(p: Promise<void>): void {
    this.inflight.add(p);
    void p.finally(() => this.inflight.delete(p));
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await Promise.allSettled([...this.inflight]);
  }
}

/** A failed fetch with its cause (connection refused, reset, timeout...) and when. */
function describe(e: unknown): string {
  const cause = (e as { cause?: { code?: string; message?: string } })?.cause;
  return `${String(e)}${cause ? ` (${cause.code ?? ''} ${cause.message ?? ''})` : ''} at ${new Date().toISOString()}`;
}

export interface Delivery {
  event_type: string;
  rule_id: string;
  at: number;
}

export class WebhookReceiver {
  readonly got: Delivery[] = [];
  /** While true, requests are received but never answered (a receiver that hangs). */
  hang = false;
  private server!: Server;
  port = 0;

  async listen(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        try {
          const j = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          this.got.push({ event_type: j.event_type, rule_id: j.data?.rule_id, at: performance.now() });
        } catch {
          // not ours
        }
        if (!this.hang) res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  count(eventType: string, ruleId: string): number {
    return this.got.filter((d) => d.event_type === eventType && d.rule_id === ruleId).length;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}
