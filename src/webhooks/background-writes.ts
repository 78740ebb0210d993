/**
 * Store writes nobody waits for (delivery records written as attempts come back), tracked so
 * that a failure is logged rather than lost and so that stop() and a webhook's deletion can
 * wait until every write issued so far has settled.
 */
import { ServiceError } from '../errors.js';
import { log } from '../log.js';

export class BackgroundWrites {
  private readonly inFlight = new Set<Promise<unknown>>();

  track(p: Promise<unknown>): void {
    const q = p.catch((e) => {
      // A full store is logged once by the store itself; anything else is logged here.
      if (!(e instanceof ServiceError && (e.code === 'STORAGE_FULL' || e.code === 'STORAGE_UNAVAILABLE'))) {
        log.error('webhook store write failed', { err: String((e as Error)?.message ?? e) });
      }
    });
    this.inFlight.add(q);
    void q.finally(() => this.inFlight.delete(q));
  }

  /** Resolves once every write issued so far has settled. */
  async settle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }
}
