/**
 * Stores many rules of one tenant straight into a data directory before the server starts
 * (creating 25,000 rules over HTTP would take minutes). Returns their ids in the order the
 * API lists them (by bytes). Rules differ in card type: `ct<i>`.
 */
import { open } from 'lmdb';
import { padAttributes } from '../../src/routing/attributes.js';

const COUNTRIES = ['US', 'GB', 'DE', 'FR', 'BR', 'MX', 'JP', 'IN', 'CA', 'AU'];

export async function seedRules(dir: string, tenantId: string, count: number, idOf: (i: number) => string = (i) => `rule_${i}`): Promise<string[]> {
  const ids: string[] = [];
  const root = open({ path: dir, maxDbs: 64, compression: false });
  const rules = root.openDB({ name: 'rules' });
  const now = new Date().toISOString();
  await rules.transaction(() => {
    for (let i = 0; i < count; i++) {
      const id = idOf(i);
      ids.push(id);
      rules.putSync([tenantId, id], {
        rule_id: id,
        attributes: padAttributes([COUNTRIES[i % 10], 'USD', 'card', `ct${i}`]),
        primary_id: 'stripe',
        primary_name: 'Stripe',
        secondary_id: 'adyen',
        secondary_name: 'Adyen',
        primary_weight: 0.9,
        created_at: now,
      });
    }
  });
  await root.close();
  return ids.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}
