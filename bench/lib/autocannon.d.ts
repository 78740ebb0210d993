declare module 'autocannon' {
  interface Request {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
  }
  interface Options {
    url: string;
    connections?: number;
    duration?: number;
    pipelining?: number;
    workers?: number;
    headers?: Record<string, string>;
    method?: string;
    body?: string;
    requests?: Request[];
  }
  interface Histogram {
    average: number;
    mean: number;
    p50: number;
    p90: number;
    p99: number;
    /** autocannon reports it (hdr histogram percentiles). */
    p99_9: number;
    max: number;
    total: number;
  }
  interface Result {
    requests: Histogram;
    latency: Histogram;
    non2xx: number;
    errors: number;
    timeouts: number;
    '2xx': number;
  }
  function autocannon(opts: Options): Promise<Result>;
  export default autocannon;
}
