/**
 * Operator commands (manual failover / recover) sent to any replica: a follower forwards the
 * command to the leader through Redis and relays the leader's answer.
 *
 *   follower ──PUBLISH commands {id, tenant, rule, processors, action, actor, deadline}──► every replica
 *   leader:  claims the id (script: the lease is still ours AND SET NX claim) ──► applies it as a
 *            local command (validation, engine, audit, webhook) ──PUBLISH replies:<follower>──►
 *   follower: answer received ──► waits for the decision table that reflects it ──► HTTP answer
 *
 * Pub/sub rather than a stream: commands are rare, so one subscriber connection per replica
 * (commands + its own replies) costs nothing while idle (no blocking read loop); a command
 * lost with a connection is answered 503 after the bounded wait, and a command whose deadline
 * passed is never applied late. The claim makes the application exactly-once across a leader
 * change: only the replica whose lease value is in Redis at that instant can claim, once.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { log } from '../log.js';
import type { ClusterKeys } from './keys.js';
import { connectRedis, type GuardedRedis } from './redis-client.js';
import { LuaScript } from './script.js';

export type ManualAction = 'failover' | 'recover';

/** What a follower sends: the command and the caller's identity for the audit trail. */
export interface ForwardedCommand {
  id: string;
  /** Replica to answer (its reply channel). */
  from: string;
  tenant: string;
  rule_id: string;
  /** The rule's processors as the sender knows them: the leader refuses if its rule differs. */
  primary_id: string;
  secondary_id: string;
  action: ManualAction;
  /** The caller's key fingerprint (null in development mode) and admin flag. */
  actor: string | null;
  admin: boolean;
  /** Epoch ms past which the sender has given up: the leader no longer applies it. */
  deadline_ms: number;
}

/** The leader's answer: the HTTP status and body it would have sent itself. */
export interface CommandAnswer {
  status: number;
  body?: unknown;
  /** For an error: the catalogued error, rebuilt as is by the sender. */
  error?: { code: string; message: string; fields?: { field: string; message: string }[]; headers?: Record<string, string> };
  /** The decision table (epoch, version) that carries the command's effect, on success. */
  table?: { epoch: number; version: number };
  /** Applied, but no table reflecting it was published before the sender's deadline. */
  tableMissing?: boolean;
}

interface Reply extends CommandAnswer {
  id: string;
}

/** Why a forwarded command got no answer. */
export type RelayFailure = 'redis_unreachable' | 'no_answer';

/** KEYS: lease, claim. ARGV: our lease value, our replica id. 1 = ours to apply. */
const CLAIM = new LuaScript(
  `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if redis.call('SET', KEYS[2], ARGV[2], 'NX', 'PX', 60000) then return 1 end
return 0`,
  2,
);

export interface RelayOptions {
  url: string;
  conn: GuardedRedis;
  keys: ClusterKeys;
  replicaId: string;
  /** Our lease value while we lead ('' otherwise): the claim compares it in Redis. */
  fenceValue: () => string;
}

export class CommandRelay {
  private readonly sub: Redis;
  private readonly replyChannel: string;
  private readonly pending = new Map<string, (a: Reply) => void>();
  private handler: ((c: ForwardedCommand) => Promise<CommandAnswer>) | null = null;
  private subscribed = false;
  /** Forwarded commands this replica applied as leader. */
  served = 0;

  constructor(private readonly o: RelayOptions) {
    this.replyChannel = o.keys.replyChannelPrefix + o.replicaId;
    this.sub = connectRedis({ url: o.url, name: `engine:${o.replicaId}:commands`, commandTimeoutMs: 2000 });
    this.sub.on('message', (channel: string, message: string) => {
      if (channel === this.replyChannel) this.onReply(message);
      else if (channel === o.keys.commandChannel) void this.onCommand(message);
    });
    const subscribe = () =>
      void this.sub.subscribe(o.keys.commandChannel, this.replyChannel).then(
        () => (this.subscribed = true),
        () => {},
      );
    this.sub.on('ready', subscribe);
    this.sub.on('close', () => (this.subscribed = false));
  }

  /** The leader's side: how a forwarded command is applied (the same code as a local request). */
  serve(handler: (c: ForwardedCommand) => Promise<CommandAnswer>): void {
    this.handler = handler;
  }

  /**
   * Sends the command and resolves with the leader's answer, or with why there is none by
   * `deadlineMs` (epoch ms). Never rejects.
   */
  async forward(c: Omit<ForwardedCommand, 'id' | 'from' | 'deadline_ms'>, deadlineMs: number): Promise<CommandAnswer | RelayFailure> {
    // Without our subscription the answer could not reach us: say so now rather than after the wait.
    if (!this.subscribed || !this.o.conn.connected()) return 'redis_unreachable';
    const msg: ForwardedCommand = { ...c, id: randomUUID(), from: this.o.replicaId, deadline_ms: deadlineMs };
    const answer = new Promise<Reply | 'no_answer'>((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(msg.id);
        resolve('no_answer');
      }, Math.max(0, deadlineMs - Date.now()));
      this.pending.set(msg.id, (a) => {
        clearTimeout(timer);
        this.pending.delete(msg.id);
        resolve(a);
      });
    });
    try {
      await this.o.conn.run((r) => r.publish(this.o.keys.commandChannel, JSON.stringify(msg)));
    } catch {
      this.pending.get(msg.id)?.({ id: msg.id, status: 0 });
      await answer;
      return 'redis_unreachable';
    }
    const a = await answer;
    if (a === 'no_answer') return 'no_answer';
    return { status: a.status, body: a.body, error: a.error, table: a.table, tableMissing: a.tableMissing };
  }

  async stop(): Promise<void> {
    this.handler = null;
    this.sub.disconnect(false);
  }

  private onReply(message: string): void {
    let r: Reply;
    try {
      r = JSON.parse(message) as Reply;
    } catch {
      return;
    }
    this.pending.get(r.id)?.(r);
  }

  private async onCommand(message: string): Promise<void> {
    const fence = this.o.fenceValue();
    // Every replica hears every command; only the leader acts on it.
    if (fence === '' || this.handler === null) return;
    let c: ForwardedCommand;
    try {
      c = JSON.parse(message) as ForwardedCommand;
    } catch {
      log.error('cluster: malformed forwarded command ignored');
      return;
    }
    if (c.from === this.o.replicaId) return;
    // The sender has already answered 503: applying it now would surprise the operator.
    if (!(Date.now() < c.deadline_ms)) {
      log.warn('cluster: forwarded command arrived after its deadline; not applied', { from: c.from, rule_id: c.rule_id, action: c.action });
      return;
    }
    try {
      const claimed = await this.o.conn.run((r) => CLAIM.run(r, [this.o.keys.lease, this.o.keys.commandClaimPrefix + c.id], [fence, this.o.replicaId]));
      if (claimed !== 1) return;
    } catch {
      return; // Redis unreachable: the sender's wait ends in a 503 naming it
    }
    const handler = this.handler;
    if (handler === null) return;
    let answer: CommandAnswer;
    try {
      answer = await handler(c);
    } catch (e) {
      log.error('cluster: forwarded command failed', { rule_id: c.rule_id, action: c.action, err: String((e as Error)?.stack ?? e) });
      answer = { status: 500, error: { code: 'INTERNAL_ERROR', message: 'internal error' } };
    }
    this.served++;
    log.info('cluster: forwarded operator command applied', { from: c.from, tenant: c.tenant, rule_id: c.rule_id, action: c.action, status: answer.status });
    const reply: Reply = { id: c.id, ...answer };
    try {
      await this.o.conn.run((r) => r.publish(this.o.keys.replyChannelPrefix + c.from, JSON.stringify(reply)));
    } catch {
      // The sender's wait ends in a 503; the command is applied (its audit entry says so).
    }
  }
}
