/**
 * The connection that LISTENs to the change feed ("<schema>_changes"), named
 * `routing-listener:<replica id>` so operators (and tests) can find it; a lost one reconnects
 * every second (the store's poll covers what it missed). It also holds an advisory lock on the
 * replica id while it lives: a replica skips the changes marked with its own id, so two
 * running processes with one SERVICE_REPLICA_ID would never see each other's writes; the
 * second one is refused at start (ReplicaIdInUse).
 */
import pg from 'pg';
import { log } from '../../log.js';
import { quoteIdent } from './migrations.js';

const RECONNECT_MS = 1000;
/** Advisory lock class of the replica ids (the migrations use 0x5107). */
const REPLICA_LOCK_CLASS = 0x5108;

export class ReplicaIdInUse extends Error {
  override name = 'ReplicaIdInUse';
}

export interface ChangeListenerOptions {
  url: string;
  schema: string;
  replicaId: string;
  /** A notification arrived, or the connection is (back) up: read the feed. */
  onNotify(): void;
}

export class ChangeListener {
  private client: pg.Client | null = null;
  private down = false;
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  private closed = false;

  constructor(private readonly o: ChangeListenerOptions) {}

  connected(): boolean {
    return this.client !== null;
  }

  /** Connects; `first` (at start) rejects with ReplicaIdInUse when another process holds the id. */
  async connect(first = false): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({
      connectionString: this.o.url,
      application_name: `routing-listener:${this.o.replicaId}`.slice(0, 63),
      connectionTimeoutMillis: 3000,
      keepAlive: true,
    });
    const lost = (why: string) => {
      if (this.client === client) this.client = null;
      client.removeAllListeners('notification');
      client.end().catch(() => undefined);
      if (!this.closed && this.reconnectTimer === undefined) {
        // Once per episode: during an outage every reconnection attempt fails.
        if (!this.down) log.warn('store change listener lost; reconnecting every second (the poll covers the gap)', { why });
        this.down = true;
        this.reconnectTimer = setTimeout(() => {
          this.reconnectTimer = undefined;
          void this.connect();
        }, RECONNECT_MS);
        this.reconnectTimer.unref();
      }
    };
    client.on('error', (e) => lost(e.message));
    client.on('end', () => lost('connection ended'));
    client.on('notification', () => this.o.onNotify());
    try {
      await client.connect();
      // A session whose host vanished is dropped within ~25 s instead of the system's hours.
      await client.query('SET tcp_keepalives_idle = 10; SET tcp_keepalives_interval = 5; SET tcp_keepalives_count = 3');
      const own = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, hashtext($2)) AS ok', [REPLICA_LOCK_CLASS, `${this.o.schema}/${this.o.replicaId}`]);
      if (!own.rows[0].ok) {
        const msg = `replica id "${this.o.replicaId}" is in use by another running replica of cluster "${this.o.schema}": give each replica its own SERVICE_REPLICA_ID`;
        if (first) {
          client.removeAllListeners('end');
          client.removeAllListeners('error');
          client.on('error', () => undefined);
          await client.end().catch(() => undefined);
          throw new ReplicaIdInUse(msg);
        }
        log.error(msg);
      }
      await client.query(`LISTEN ${quoteIdent(`${this.o.schema}_changes`)}`);
      if (this.closed) {
        await client.end();
        return;
      }
      this.client = client;
      if (this.down) log.info('store change listener connected again');
      this.down = false;
      this.o.onNotify(); // what was written while no one listened
    } catch (e) {
      if (e instanceof ReplicaIdInUse) throw e;
      lost((e as Error).message);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    const c = this.client;
    this.client = null;
    if (!c) return;
    c.removeAllListeners('end');
    c.removeAllListeners('error');
    c.on('error', () => undefined);
    await c.end().catch(() => undefined);
  }
}
