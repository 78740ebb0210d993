/**
 * Opens the store the configuration asks for: the embedded LMDB store in SERVICE_DATA_DIR
 * (the default), or, with SERVICE_STORE_URL, the PostgreSQL store of cluster SERVICE_CLUSTER
 * with the replica's own records (decision records, its webhook retry queue) in its LMDB.
 * The files of an LMDB store are checked before they are mapped (a damaged or vanished store
 * is refused unless SERVICE_STORE_START_FRESH).
 */
import { mkdirSync } from 'node:fs';
import type { Config } from '../config.js';
import { log } from '../log.js';
import { StartupError } from '../startup-error.js';
import { LmdbStore } from './lmdb-store.js';
import { PostgresStore } from './postgres/pg-store.js';
import type { Store } from './store.js';
import { checkStoreFiles, markStoreCreated } from './store-files.js';

export function openLmdb(dataDir: string, startFresh: boolean): LmdbStore {
  mkdirSync(dataDir, { recursive: true });
  const check = checkStoreFiles(dataDir, startFresh);
  if (check.reason !== null) {
    log.warn('store moved aside; starting with an empty store (SERVICE_STORE_START_FRESH)', { reason: check.reason, moved: check.movedAside });
  }
  const store = new LmdbStore(dataDir);
  markStoreCreated(dataDir);
  return store;
}

/** The URL without its password, for messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'SERVICE_STORE_URL';
  }
}

export async function openStore(config: Config): Promise<Store> {
  const local = openLmdb(config.dataDir, config.storeStartFresh);
  if (config.storeUrl === null) return local;
  try {
    const store = await PostgresStore.open({ url: config.storeUrl, schema: config.cluster, replicaId: config.replicaId, local });
    log.info('store: PostgreSQL (cluster mode)', { url: redactUrl(config.storeUrl), cluster: config.cluster });
    return store;
  } catch (e) {
    await local.close();
    throw new StartupError(`cannot open the PostgreSQL store at ${redactUrl(config.storeUrl)} (SERVICE_STORE_URL), cluster "${config.cluster}": ${(e as Error).message}`);
  }
}
