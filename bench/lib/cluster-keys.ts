/** Deleting one cluster's Redis keys after a benchmark or a test run (never used by the service). */
import { Redis } from 'ioredis';
import { clusterKeyPrefix } from '../../src/cluster/keys.js';

/** Deletes every key of the cluster (SCAN, so a large keyspace is not blocked). */
export async function deleteClusterKeys(url: string, cluster: string): Promise<void> {
  const r = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await r.scan(cursor, 'MATCH', `${clusterKeyPrefix(cluster)}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await r.del(...keys);
    } while (cursor !== '0');
  } finally {
    r.disconnect();
  }
}
