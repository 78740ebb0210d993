/**
 * The benchmarks' Prometheus: GET /metrics/ every second, asking for gzip as Prometheus does,
 * until told to stop. The compressed bytes are read and dropped, not decompressed: this runs
 * on the load generator's core, and undici's fetch, which decompresses and decodes the text
 * (1.15 MB at 1,000 rules), used 7-24 ms of that core per scrape, in which wrk could not read
 * the service's answers: the routes' p99 then held the scraper's CPU, not the service's work.
 * A real Prometheus decompresses on its own machine; the service's part (rendering,
 * compressing, sending) is the same either way.
 */
import { request } from 'node:http';

export interface ScrapeLoopResult {
  /** Scrapes answered 200. */
  scrapes: number;
  /** CPU this process used per scrape, ms (reading and dropping the answer). */
  cpuMsPerScrape: number;
}

/** One GET /metrics/ asking for gzip; resolves with the status once the answer is read (and dropped). */
export function scrapeOnce(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/metrics/`, { headers: { 'accept-encoding': 'gzip' } }, (res) => {
      res.on('error', reject);
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.resume();
    });
    req.on('error', reject);
    req.end();
  });
}

export async function scrapeEverySecond(url: string, until: () => boolean): Promise<ScrapeLoopResult> {
  let scrapes = 0;
  let cpuUs = 0;
  let attempts = 0;
  while (!until()) {
    const c0 = process.cpuUsage();
    const status = await scrapeOnce(url);
    const c = process.cpuUsage(c0);
    cpuUs += c.user + c.system;
    attempts++;
    if (status === 200) scrapes++;
    await new Promise((r) => setTimeout(r, 1000));
  }
  return { scrapes, cpuMsPerScrape: attempts > 0 ? cpuUs / 1000 / attempts : 0 };
}
