/**
 * The webhooks each tenant registered: the `webhooks` collection ([tenantId, webhookId] →
 * WebhookRecord, secret included: it is needed to sign), mirrored in memory so publish()
 * never reads the store. Only the front thread writes it.
 */
import type { Config } from '../config.js';
import { errors } from '../errors.js';
import { log } from '../log.js';
import type { WebhookInput, WebhookPatch } from '../schemas/webhooks.js';
import type { Collection, Store, WriteBatch } from '../store/store.js';
import { checkWebhookUrl } from './address.js';
import { EVENT_TYPES, newWebhookId, type EventType } from './events.js';
import type { WebhookRecord } from './records.js';

export const MAX_WEBHOOKS_PER_TENANT = 50;

/** What deleting a webhook takes with it, written in the same transaction as the webhook. */
export interface Cascade {
  /** How many delivery records go (for the log). */
  removed: number;
  write(b: WriteBatch): void;
}

export interface RegistryOptions {
  store: Store;
  config: Pick<Config, 'webhookAllowPrivate'>;
  /** Called when a webhook's url or secret changed, so queued and retried deliveries use the new ones. */
  onRetarget(tenantId: string, hook: WebhookRecord): void;
  /** Called when another replica deleted a webhook: its deliveries here stop. */
  onRemovedElsewhere(tenantId: string, webhookId: string): void;
}

function byCreation(a: WebhookRecord, b: WebhookRecord): number {
  return a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

export class WebhookRegistry {
  private readonly webhooks: Collection<WebhookRecord>;
  /** tenantId → webhookId → record. */
  private readonly cache = new Map<string, Map<string, WebhookRecord>>();
  /** Creations under way per tenant: they count against the limit before they are stored. */
  private readonly reserved = new Map<string, number>();
  private readonly locks = new Map<string, Promise<unknown>>();

  constructor(private readonly opts: RegistryOptions) {
    this.webhooks = opts.store.collection<WebhookRecord>('webhooks');
    opts.store.onRemoteChange<WebhookRecord>('webhooks', (tenantId, id, rec) => this.remoteChanged(tenantId, id, rec));
  }

  /** A webhook created, changed or deleted on another replica. */
  private remoteChanged(tenantId: string, webhookId: string, rec: WebhookRecord | undefined): void {
    const hooks = this.tenantHooks(tenantId);
    const cur = hooks.get(webhookId);
    if (rec) {
      hooks.set(webhookId, rec);
      if (cur && (cur.url !== rec.url || cur.secret !== rec.secret)) this.opts.onRetarget(tenantId, rec);
    } else if (cur) {
      hooks.delete(webhookId);
      this.opts.onRemovedElsewhere(tenantId, webhookId);
    }
  }

  /** Reads every stored webhook into memory (once, at start); returns how many. */
  load(): number {
    let n = 0;
    for (const { tenantId, id, value } of this.webhooks.listAll()) {
      this.tenantHooks(tenantId).set(id, value);
      n++;
    }
    return n;
  }

  /** The webhook, or undefined when it does not exist (or no longer does). */
  find(tenantId: string, webhookId: string): WebhookRecord | undefined {
    return this.cache.get(tenantId)?.get(webhookId);
  }

  /** The tenant's active webhooks subscribed to `eventType`. */
  subscribers(tenantId: string, eventType: EventType): WebhookRecord[] {
    return [...(this.cache.get(tenantId)?.values() ?? [])].filter((h) => h.active && h.event_types.includes(eventType));
  }

  list(tenantId: string): WebhookRecord[] {
    return [...(this.cache.get(tenantId)?.values() ?? [])].sort(byCreation);
  }

  get(tenantId: string, webhookId: string): WebhookRecord {
    const h = this.find(tenantId, webhookId);
    if (!h) throw errors.webhookNotFound(webhookId);
    return h;
  }

  async create(tenantId: string, input: WebhookInput): Promise<WebhookRecord> {
    this.checkUrl(input.url);
    const hooks = this.tenantHooks(tenantId);
    const reserved = this.reserved.get(tenantId) ?? 0;
    if (hooks.size + reserved >= MAX_WEBHOOKS_PER_TENANT) {
      throw errors.limit('webhooks', `a tenant may have at most ${MAX_WEBHOOKS_PER_TENANT} webhooks; delete one first`);
    }
    const now = new Date().toISOString();
    const record: WebhookRecord = {
      id: newWebhookId(),
      url: input.url,
      event_types: input.event_types ? [...input.event_types] : [...EVENT_TYPES],
      active: input.active ?? true,
      secret: input.secret ?? null,
      created_at: now,
      updated_at: now,
    };
    this.reserved.set(tenantId, reserved + 1);
    try {
      await this.webhooks.put(tenantId, record.id, record);
    } finally {
      this.reserved.set(tenantId, (this.reserved.get(tenantId) ?? 1) - 1);
    }
    hooks.set(record.id, record);
    log.info('webhook created', { tenant_id: tenantId, webhook_id: record.id, event_types: record.event_types, signed: record.secret !== null });
    return record;
  }

  update(tenantId: string, webhookId: string, patch: WebhookPatch): Promise<WebhookRecord> {
    if (patch.url !== undefined) this.checkUrl(patch.url);
    return this.serial(`${tenantId}/${webhookId}`, async () => {
      const cur = this.get(tenantId, webhookId);
      const next: WebhookRecord = {
        ...cur,
        url: patch.url ?? cur.url,
        event_types: patch.event_types ? [...patch.event_types] : cur.event_types,
        active: patch.active ?? cur.active,
        secret: patch.secret === undefined ? cur.secret : patch.secret,
        updated_at: new Date().toISOString(),
      };
      await this.webhooks.put(tenantId, webhookId, next);
      this.tenantHooks(tenantId).set(webhookId, next);
      if (next.url !== cur.url || next.secret !== cur.secret) this.opts.onRetarget(tenantId, next);
      log.info('webhook updated', { tenant_id: tenantId, webhook_id: webhookId, active: next.active, event_types: next.event_types, signed: next.secret !== null });
      return next;
    });
  }

  /**
   * Deletes the webhook. It disappears from memory first (publish() stops seeing it), then
   * `cascade` stops its deliveries and names the writes that delete them, applied in one
   * transaction with the webhook's own removal; if that fails the webhook is back.
   */
  remove(tenantId: string, webhookId: string, cascade: () => Promise<Cascade>): Promise<void> {
    return this.serial(`${tenantId}/${webhookId}`, async () => {
      const cur = this.get(tenantId, webhookId);
      const hooks = this.tenantHooks(tenantId);
      hooks.delete(webhookId);
      const also = await cascade();
      try {
        await this.opts.store.atomic((b) => {
          b.remove(this.webhooks, tenantId, webhookId);
          also.write(b);
        });
      } catch (e) {
        hooks.set(webhookId, cur);
        throw e;
      }
      log.info('webhook deleted', { tenant_id: tenantId, webhook_id: webhookId, deliveries_removed: also.removed });
    });
  }

  private checkUrl(url: string): void {
    const problem = checkWebhookUrl(url, this.opts.config.webhookAllowPrivate);
    if (problem) throw errors.field('url', problem);
  }

  private tenantHooks(tenantId: string): Map<string, WebhookRecord> {
    let m = this.cache.get(tenantId);
    if (!m) {
      m = new Map();
      this.cache.set(tenantId, m);
    }
    return m;
  }

  /** Runs `fn` after any earlier operation on the same key (update and delete of one webhook). */
  private serial<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.locks.get(key) ?? Promise.resolve();
    const run = prev.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.locks.set(key, tail);
    void tail.then(() => {
      if (this.locks.get(key) === tail) this.locks.delete(key);
    });
    return run;
  }
}
