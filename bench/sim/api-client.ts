/**
 * Minimal client for the routing API calls the live simulator makes (spec 4.1, 4.2).
 * Uses undici's `request` on a keep-alive Agent: at hundreds of calls per second a new
 * connection per call would measure TCP setup rather than the engine.
 */
import { Agent, request } from 'undici';

export interface RuleInput {
  rule_id: string;
  attributes: string[];
  primary_id: string;
  primary_name: string;
  secondary_id: string;
  secondary_name: string;
  primary_weight: number;
}

export interface RouteRequest {
  country: string;
  currency: string;
  payment_method: string;
  amount: number;
}

export interface RouteResponse {
  processor_id: string;
  weight: number;
  fallback_processor_id: string;
  decision_source: string;
  failure_probability: number | null;
}

export interface OutcomeReport {
  rule_id: string;
  processor_id: string;
  success: boolean;
  latency_ms: number;
  error_code: string | null;
}

export class HttpStatusError extends Error {
  constructor(
    readonly method: string,
    readonly path: string,
    readonly status: number,
    body: string,
  ) {
    super(`${method} ${path} -> ${status}: ${body.slice(0, 200)}`);
  }
}

export class RoutingApiClient {
  private readonly agent = new Agent({ keepAliveTimeout: 30_000, connections: 64 });

  constructor(
    private readonly baseUrl: string,
    private readonly apiKey?: string,
  ) {}

  /** Creates the rule; if the id is taken (409), deletes the old one and creates it again. */
  async replaceRule(rule: RuleInput): Promise<void> {
    try {
      await this.call('POST', '/v1/rules', rule);
    } catch (err) {
      if (!(err instanceof HttpStatusError && err.status === 409)) throw err;
      await this.call('DELETE', `/v1/rules/${encodeURIComponent(rule.rule_id)}`, undefined);
      await this.call('POST', '/v1/rules', rule);
    }
  }

  route(req: RouteRequest): Promise<RouteResponse> {
    return this.call('POST', '/v1/route', req) as Promise<RouteResponse>;
  }

  async outcome(report: OutcomeReport): Promise<void> {
    await this.call('POST', '/v1/outcome', report);
  }

  /** The newest failover events (GET /v1/failover-events), newest first. */
  failoverEvents(limit = 100): Promise<{ rule_id: string; from_processor: string; timestamp: string }[]> {
    return this.call('GET', `/v1/failover-events?limit=${limit}`, undefined) as Promise<{ rule_id: string; from_processor: string; timestamp: string }[]>;
  }

  close(): Promise<void> {
    return this.agent.close();
  }

  /**
   * Sends JSON and returns the parsed body (undefined when empty). Any 2xx is accepted:
   * checking exact status codes is the integration tests' job, not the simulator's.
   */
  private async call(method: 'GET' | 'POST' | 'DELETE', path: string, body: unknown): Promise<unknown> {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.apiKey) headers['x-api-key'] = this.apiKey;
    const res = await request(this.baseUrl.replace(/\/+$/, '') + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      dispatcher: this.agent,
    });
    const text = await res.body.text();
    if (res.statusCode < 200 || res.statusCode > 299) throw new HttpStatusError(method, path, res.statusCode, text);
    return text === '' ? undefined : JSON.parse(text);
  }
}
