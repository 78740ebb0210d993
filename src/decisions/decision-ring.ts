/**
 * Preallocated rings the route and outcome paths write into when a request carries a
 * `transaction_id`: plain stores into fixed arrays (struct of arrays), no object built, no
 * store access, no message. The flush timer drains them into the store (decision-log.ts: one
 * transaction per FLUSH_SLICE_RECORDS records).
 * When a ring is full (the flush fell behind), the newest entry is dropped and counted: the
 * request path never waits.
 * The typed arrays are allocated at full capacity (zeroed pages the kernel maps only when
 * written); the arrays of references start empty and grow as entries are written (an append
 * at index `length`), to the most a flush period has held: filled at full capacity they were
 * ~8 MB of the front thread's heap for the four rings, also when no request carries a
 * transaction_id.
 */
import { DecisionSource } from '../shm/layout.js';
import type { RouteDecision } from '../schemas/routing.js';
import type { OutcomeReport } from '../schemas/routing.js';
import type { LiveRule, Tenant } from '../tenants/tenant.js';

export class RouteRing {
  readonly tenants: (Tenant | undefined)[];
  readonly txIds: (string | undefined)[];
  /** The rule as it was when routed (a later PATCH makes a new object), for the processor ids. */
  readonly rules: (LiveRule | undefined)[];
  /** The decision as numbers (not the reply object: kept until the flush, it would be promoted to the old generation). */
  readonly pickedSecondary: Uint8Array;
  readonly weight: Float64Array;
  readonly source: Uint8Array;
  readonly failProb: Float64Array;
  readonly statusPrimary: Uint8Array;
  readonly statusSecondary: Uint8Array;
  readonly atMs: Float64Array;
  length = 0;
  dropped = 0;

  constructor(readonly capacity: number) {
    this.tenants = [];
    this.txIds = [];
    this.rules = [];
    this.pickedSecondary = new Uint8Array(capacity);
    this.weight = new Float64Array(capacity);
    this.source = new Uint8Array(capacity);
    this.failProb = new Float64Array(capacity);
    this.statusPrimary = new Uint8Array(capacity);
    this.statusSecondary = new Uint8Array(capacity);
    this.atMs = new Float64Array(capacity);
  }

  push(tenant: Tenant, rule: LiveRule, txId: string, d: RouteDecision, statusP: number, statusS: number, atMs: number): boolean {
    const i = this.length;
    if (i === this.capacity) {
      this.dropped++;
      return false;
    }
    this.tenants[i] = tenant;
    this.txIds[i] = txId;
    this.rules[i] = rule;
    this.pickedSecondary[i] = d.processor_id === rule.record.primary_id ? 0 : 1;
    this.weight[i] = d.weight;
    // The layout's codes (a const enum: compiled to the numbers, nothing looked up per route).
    this.source[i] = d.decision_source === 'rules' ? DecisionSource.Rules : d.decision_source === 'prediction' ? DecisionSource.Prediction : DecisionSource.Mab;
    this.failProb[i] = d.failure_probability ?? NaN;
    this.statusPrimary[i] = statusP;
    this.statusSecondary[i] = statusS;
    this.atMs[i] = atMs;
    this.length = i + 1;
    return true;
  }

  clear(): void {
    this.tenants.fill(undefined, 0, this.length);
    this.txIds.fill(undefined, 0, this.length);
    this.rules.fill(undefined, 0, this.length);
    this.length = 0;
  }
}

export class OutcomeRing {
  readonly tenants: (Tenant | undefined)[];
  readonly txIds: (string | undefined)[];
  readonly ruleIds: (string | undefined)[];
  readonly processorIds: (string | undefined)[];
  readonly errorCodes: (string | null | undefined)[];
  readonly success: Uint8Array;
  readonly latencyMs: Float64Array;
  readonly kinds: Uint8Array;
  readonly atMs: Float64Array;
  length = 0;
  dropped = 0;

  constructor(readonly capacity: number) {
    this.tenants = [];
    this.txIds = [];
    this.ruleIds = [];
    this.processorIds = [];
    this.errorCodes = [];
    this.success = new Uint8Array(capacity);
    this.latencyMs = new Float64Array(capacity);
    this.kinds = new Uint8Array(capacity);
    this.atMs = new Float64Array(capacity);
  }

  push(tenant: Tenant, report: OutcomeReport, kind: number, atMs: number): boolean {
    const i = this.length;
    if (i === this.capacity) {
      this.dropped++;
      return false;
    }
    this.tenants[i] = tenant;
    this.txIds[i] = report.transaction_id;
    this.ruleIds[i] = report.rule_id;
    this.processorIds[i] = report.processor_id;
    this.errorCodes[i] = report.error_code ?? null;
    this.success[i] = report.success ? 1 : 0;
    this.latencyMs[i] = report.latency_ms;
    this.kinds[i] = kind;
    this.atMs[i] = atMs;
    this.length = i + 1;
    return true;
  }

  clear(): void {
    this.tenants.fill(undefined, 0, this.length);
    this.txIds.fill(undefined, 0, this.length);
    this.ruleIds.fill(undefined, 0, this.length);
    this.processorIds.fill(undefined, 0, this.length);
    this.errorCodes.fill(undefined, 0, this.length);
    this.length = 0;
  }
}
