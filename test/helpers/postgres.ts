/**
 * PostgreSQL for tests: the server on the machine (SERVICE_TEST_PG_URL, default
 * postgres://postgres@127.0.0.1:5432/test), one fresh schema per suite (dropped afterwards).
 * When the server cannot be reached the suite is skipped with the reason, unless CI is set:
 * then it fails.
 *
 *   const pg = await testPostgres();            // top level of the test file
 *   describe.skipIf(!pg.ok)('…', () => { … pg.url, newSchema(), dropSchema(s) … });
 */
import pg from 'pg';

export const TEST_PG_URL = process.env.SERVICE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface TestPostgres {
  ok: boolean;
  url: string;
  reason?: string;
}

export async function testPostgres(): Promise<TestPostgres> {
  const client = new pg.Client({ connectionString: TEST_PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return { ok: true, url: TEST_PG_URL };
  } catch (e) {
    const reason = `PostgreSQL at ${TEST_PG_URL} unreachable: ${(e as Error).message}`;
    if (process.env.CI) throw new Error(`${reason} (CI is set: the PostgreSQL tests must run)`);
    console.warn(`skipped: ${reason}`);
    return { ok: false, url: TEST_PG_URL, reason };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A schema name no other run uses (a valid SERVICE_CLUSTER). */
export function newSchema(prefix = 't'): string {
  return `${prefix}_${process.pid}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
}

/** Runs one statement on its own connection. */
export async function pgQuery<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params: unknown[] = [], url = TEST_PG_URL): Promise<R[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return (await client.query<R>(sql, params)).rows;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function dropSchema(schema: string): Promise<void> {
  await pgQuery(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}
