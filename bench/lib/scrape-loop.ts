/** The benchmarks' Prometheus: GET /metrics/ every second (as undici's fetch asks: compressed) until told to stop. */
export async function scrapeEverySecond(url: string, until: () => boolean): Promise<number> {
  let n = 0;
  while (!until()) {
    const res = await fetch(url + '/metrics/');
    await res.text();
    if (res.status === 200) n++;
    await new Promise((r) => setTimeout(r, 1000));
  }
  return n;
}
