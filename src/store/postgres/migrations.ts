/**
 * The cluster's schema (SERVICE_CLUSTER) and its versioned migrations. At start each replica
 * takes a session advisory lock (keyed by the schema name), creates the schema and the
 * `schema_migrations` table if missing, applies the steps it has not recorded yet (each in its
 * own transaction, recorded in the same one) and releases the lock: replicas starting at
 * once apply each step exactly once, the others wait and then find it done. A database
 * migrated by a newer version (a step this build does not know) stops the start.
 *
 * Tables (see the README, "Cluster mode"):
 *   entries      one row per collection entry (rules, webhooks, configuration, overrides,
 *                checkpoints…): value in msgpack, `unique_key` (bytes: the key may hold NUL,
 *                which text cannot) for a collection's uniqueBy (rules: their attributes), `version` = the change that wrote it.
 *   log_entries  append-only logs (failover audit trail, change audit, deliveries' attempts).
 *   changes      the change feed: one row per announced write; an insert NOTIFYs
 *                "<schema>_changes" (statement trigger), delivered at commit.
 *   replicas     the replicas that started, and when they last proved the store writable.
 */
import type pg from 'pg';
import { log } from '../../log.js';

export interface Migration {
  version: number;
  name: string;
  sql: (schema: string) => string;
}

export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: 'entries, logs, change feed, replicas',
    sql: (s) => `
      CREATE TABLE ${s}.entries (
        collection text NOT NULL,
        tenant text NOT NULL,
        id text NOT NULL,
        value bytea NOT NULL,
        unique_key bytea,
        version bigint NOT NULL,
        PRIMARY KEY (collection, tenant, id)
      );
      CREATE UNIQUE INDEX entries_unique_key ON ${s}.entries (collection, tenant, unique_key) WHERE unique_key IS NOT NULL;
      CREATE SEQUENCE ${s}.entry_versions;
      CREATE TABLE ${s}.log_entries (
        seq bigserial PRIMARY KEY,
        log text NOT NULL,
        tenant text NOT NULL,
        at_ms bigint NOT NULL,
        value bytea NOT NULL
      );
      CREATE INDEX log_entries_order ON ${s}.log_entries (log, tenant, at_ms, seq);
      CREATE TABLE ${s}.changes (
        seq bigserial PRIMARY KEY,
        collection text NOT NULL,
        tenant text NOT NULL,
        key text,
        kind text NOT NULL CHECK (kind IN ('entry', 'clear', 'log', 'prune')),
        replica text NOT NULL,
        at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX changes_at ON ${s}.changes (at);
      CREATE FUNCTION ${s}.notify_changes() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify(TG_TABLE_SCHEMA || '_changes', '');
        RETURN NULL;
      END $$;
      CREATE TRIGGER changes_notify AFTER INSERT ON ${s}.changes FOR EACH STATEMENT EXECUTE FUNCTION ${s}.notify_changes();
      CREATE TABLE ${s}.replicas (
        replica_id text PRIMARY KEY,
        started_at timestamptz NOT NULL,
        seen_at timestamptz NOT NULL
      );
    `,
  },
];

/** Serializes the migrations of one schema across replicas (a constant class id + the schema's hash). */
const LOCK_CLASS = 0x5107;

/** Creates and migrates `schema` (an identifier validated by the configuration, quoted here). */
export async function migrate(pool: pg.Pool, schema: string): Promise<number[]> {
  const s = quoteIdent(schema);
  const client = await pool.connect();
  const applied: number[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1, hashtext($2))', [LOCK_CLASS, schema]);
    try {
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${s}.schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
      );
      const done = new Set((await client.query<{ version: number }>(`SELECT version FROM ${s}.schema_migrations`)).rows.map((r) => r.version));
      const known = new Set(MIGRATIONS.map((m) => m.version));
      const unknown = [...done].filter((v) => !known.has(v));
      if (unknown.length > 0) {
        throw new Error(`schema "${schema}" has migration(s) ${unknown.join(', ')} that this version does not know: it was migrated by a newer version`);
      }
      for (const m of MIGRATIONS) {
        if (done.has(m.version)) continue;
        await client.query('BEGIN');
        try {
          await client.query(m.sql(s));
          await client.query(`INSERT INTO ${s}.schema_migrations (version, name) VALUES ($1, $2)`, [m.version, m.name]);
          await client.query('COMMIT');
        } catch (e) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw e;
        }
        applied.push(m.version);
        log.info('store schema migrated', { schema, version: m.version, name: m.name });
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1, hashtext($2))', [LOCK_CLASS, schema]).catch(() => undefined);
    }
  } finally {
    client.release();
  }
  return applied;
}

export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
