/**
 * The statements of the PostgreSQL store, for one schema (already quoted). An announced write
 * inserts its change row in the same statement (a data-modifying CTE), so the change, the
 * entry and the NOTIFY (fired by the changes table's statement trigger) commit together; the
 * entry's version is the change's number.
 */
export function statements(s: string) {
  const upsert = `ON CONFLICT (collection, tenant, id) DO UPDATE SET value = EXCLUDED.value, unique_key = EXCLUDED.unique_key, version = EXCLUDED.version`;
  return {
    /** $1 collection, $2 tenant, $3 id, $4 value, $5 unique key, $6 replica → version. */
    putAnnounced: `WITH c AS (INSERT INTO ${s}.changes (collection, tenant, key, kind, replica) VALUES ($1, $2, $3, 'entry', $6) RETURNING seq)
      INSERT INTO ${s}.entries (collection, tenant, id, value, unique_key, version) SELECT $1, $2, $3, $4, $5, c.seq FROM c ${upsert} RETURNING version`,
    /** Like putAnnounced; no row comes back when the id exists (the change row is then a harmless no-op). */
    insertAnnounced: `WITH c AS (INSERT INTO ${s}.changes (collection, tenant, key, kind, replica) VALUES ($1, $2, $3, 'entry', $6) RETURNING seq)
      INSERT INTO ${s}.entries (collection, tenant, id, value, unique_key, version) SELECT $1, $2, $3, $4, $5, c.seq FROM c
      ON CONFLICT (collection, tenant, id) DO NOTHING RETURNING version`,
    /** $1 collection, $2 tenant, $3 id, $4 value, $5 unique key → version. */
    putQuiet: `INSERT INTO ${s}.entries (collection, tenant, id, value, unique_key, version) VALUES ($1, $2, $3, $4, $5, nextval('${s}.entry_versions')) ${upsert} RETURNING version`,
    insertQuiet: `INSERT INTO ${s}.entries (collection, tenant, id, value, unique_key, version) VALUES ($1, $2, $3, $4, $5, nextval('${s}.entry_versions'))
      ON CONFLICT (collection, tenant, id) DO NOTHING RETURNING version`,
    /** Many quiet puts in one statement (engine checkpoints of a cycle): arrays of collection, tenant, id, value, unique key. */
    putQuietMany: `INSERT INTO ${s}.entries (collection, tenant, id, value, unique_key, version)
      SELECT c, t, i, v, u, nextval('${s}.entry_versions') FROM unnest($1::text[], $2::text[], $3::text[], $4::bytea[], $5::bytea[]) AS x(c, t, i, v, u)
      ${upsert} RETURNING collection, tenant, id, version`,
    /** $1 collection, $2 tenant, $3 id, $4 replica → removed (0/1), seq (null when nothing was removed). */
    removeAnnounced: `WITH d AS (DELETE FROM ${s}.entries WHERE collection = $1 AND tenant = $2 AND id = $3 RETURNING id),
      c AS (INSERT INTO ${s}.changes (collection, tenant, key, kind, replica) SELECT $1, $2, $3, 'entry', $4 FROM d RETURNING seq)
      SELECT (SELECT count(*) FROM d)::int AS removed, (SELECT seq FROM c) AS seq`,
    removeQuiet: `WITH d AS (DELETE FROM ${s}.entries WHERE collection = $1 AND tenant = $2 AND id = $3 RETURNING id)
      SELECT (SELECT count(*) FROM d)::int AS removed, nextval('${s}.entry_versions') AS seq`,
    /** $1 collection. */
    clearQuiet: `DELETE FROM ${s}.entries WHERE collection = $1`,
    /** $1 collection, $2 replica. */
    clear: `WITH d AS (DELETE FROM ${s}.entries WHERE collection = $1)
      INSERT INTO ${s}.changes (collection, tenant, key, kind, replica) VALUES ($1, '', NULL, 'clear', $2) RETURNING seq`,
    /** $1 log, $2 tenant, $3 at_ms, $4 value, $5 replica → seq. */
    append: `WITH e AS (INSERT INTO ${s}.log_entries (log, tenant, at_ms, value) VALUES ($1, $2, $3, $4) RETURNING seq),
      c AS (INSERT INTO ${s}.changes (collection, tenant, key, kind, replica) SELECT $1, $2, e.seq::text, 'log', $5 FROM e)
      SELECT seq FROM e`,
    /** $1 log, $2 tenant, $3 cutoff ms, $4 change key, $5 replica → removed. */
    prune: `WITH d AS (DELETE FROM ${s}.log_entries WHERE log = $1 AND tenant = $2 AND at_ms < $3 RETURNING seq),
      c AS (INSERT INTO ${s}.changes (collection, tenant, key, kind, replica) SELECT $1, $2, $4, 'prune', $5 WHERE EXISTS (SELECT 1 FROM d))
      SELECT count(*)::int AS removed FROM d`,
    /** $1 log, $2 tenant, $3 keep, $4 change key, $5 replica → removed. */
    pruneBeyond: `WITH d AS (DELETE FROM ${s}.log_entries WHERE seq IN (
        SELECT seq FROM ${s}.log_entries WHERE log = $1 AND tenant = $2 ORDER BY at_ms DESC, seq DESC OFFSET $3) RETURNING seq),
      c AS (INSERT INTO ${s}.changes (collection, tenant, key, kind, replica) SELECT $1, $2, $4, 'prune', $5 WHERE EXISTS (SELECT 1 FROM d))
      SELECT count(*)::int AS removed FROM d`,
    /**
     * The changes after $1, each with the entry (or log entry) as it is now: applying a change
     * means taking the current value, so changes applied late or twice still end at the
     * database's state.
     */
    changesSince: `SELECT c.seq, c.collection, c.tenant, c.key, c.kind, c.replica, e.value, e.version, l.at_ms, l.value AS log_value
      FROM ${s}.changes c
      LEFT JOIN ${s}.entries e ON c.kind = 'entry' AND e.collection = c.collection AND e.tenant = c.tenant AND e.id = c.key
      LEFT JOIN ${s}.log_entries l ON l.seq = (CASE WHEN c.kind = 'log' THEN c.key::bigint END)
      WHERE c.seq > $1 ORDER BY c.seq LIMIT $2`,
    allEntries: `SELECT collection, tenant, id, value, version FROM ${s}.entries`,
    allLogEntries: `SELECT log, tenant, seq, at_ms, value FROM ${s}.log_entries`,
    maxChange: `SELECT coalesce(max(seq), 0) AS max FROM ${s}.changes`,
    changeNumbersSince: `SELECT seq FROM ${s}.changes WHERE seq > $1`,
    /** $1 replica. */
    replicaSeen: `INSERT INTO ${s}.replicas (replica_id, started_at, seen_at) VALUES ($1, now(), now())
      ON CONFLICT (replica_id) DO UPDATE SET seen_at = now()`,
    replicaStarted: `INSERT INTO ${s}.replicas (replica_id, started_at, seen_at) VALUES ($1, now(), now())
      ON CONFLICT (replica_id) DO UPDATE SET started_at = now(), seen_at = now()`,
    /** $1 name pattern (`webhook_pending@%`) → the replica-scoped collections that hold entries. */
    replicaScopes: `SELECT DISTINCT collection FROM ${s}.entries WHERE collection LIKE $1`,
    /**
     * Moves another replica's entries of a replica-scoped collection under ours ($1 theirs, $2
     * ours): one statement, so of two replicas adopting at once one gets each entry.
     */
    adoptScope: `UPDATE ${s}.entries SET collection = $2, version = nextval('${s}.entry_versions') WHERE collection = $1 RETURNING tenant, id, value, version`,
    /** The feed keeps an hour: a replica cut off longer reloads everything when it reconnects. */
    pruneChanges: `DELETE FROM ${s}.changes WHERE at < now() - interval '1 hour'`,
  };
}

export type Statements = ReturnType<typeof statements>;

export interface ChangeRow {
  seq: string;
  collection: string;
  tenant: string;
  key: string | null;
  kind: 'entry' | 'clear' | 'log' | 'prune';
  replica: string;
  value: Buffer | null;
  version: string | null;
  at_ms: string | null;
  log_value: Buffer | null;
}
