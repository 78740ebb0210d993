/**
 * The error catalog: every error the API returns has a stable machine code, an HTTP status
 * and a message naming the field at fault. One serializer (`errorBody`) writes them all and
 * never leaks internals of unexpected failures.
 */

export interface FieldIssue {
  field: string; // JSON path of the offending field, e.g. "processors[1].countries[0]"
  message: string;
}

export const ErrorCodes = {
  MALFORMED_JSON: 400,
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  ROUTING_NO_MATCH: 404,
  RULE_NOT_FOUND: 404,
  TENANT_NOT_FOUND: 404,
  WEBHOOK_NOT_FOUND: 404,
  DELIVERY_NOT_FOUND: 404,
  OVERRIDE_NOT_FOUND: 404,
  PROCESSOR_NOT_FOUND: 404,
  DECISION_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  RULE_ALREADY_EXISTS: 409,
  ONBOARDING_CONFLICT: 409,
  DELIVERY_IN_PROGRESS: 409,
  ENGINE_STATE_CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  VALIDATION_FAILED: 422,
  LIMIT_EXCEEDED: 422,
  REQUEST_TIMEOUT: 408,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
  STORAGE_UNAVAILABLE: 503,
  STORAGE_FULL: 507,
} as const;

export type ErrorCode = keyof typeof ErrorCodes;

export class ServiceError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly fields?: FieldIssue[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'ServiceError';
    this.status = ErrorCodes[code];
  }
}

export const errors = {
  malformedJson: (detail: string) => new ServiceError('MALFORMED_JSON', `request body is not valid JSON: ${detail}`, [{ field: 'body', message: detail }]),
  validation: (fields: FieldIssue[]) =>
    new ServiceError(
      'VALIDATION_FAILED',
      fields.length === 1
        ? `invalid field "${fields[0].field}": ${fields[0].message}`
        : `invalid fields: ${fields.map((f) => `"${f.field}"`).join(', ')}`,
      fields,
    ),
  field: (field: string, message: string) => errors.validation([{ field, message }]),
  unauthorized: (missing: boolean) =>
    new ServiceError('UNAUTHORIZED', missing ? 'missing X-API-Key header' : 'invalid API key', [
      { field: 'X-API-Key', message: missing ? 'header is required' : 'not a configured key' },
    ]),
  metricsUnauthorized: () =>
    new ServiceError('UNAUTHORIZED', 'this service requires a bearer token for /metrics/ (SERVICE_METRICS_TOKEN)', [
      { field: 'Authorization', message: 'Bearer <token> is required' },
    ], { 'WWW-Authenticate': 'Bearer realm="metrics"' }),
  notFound: (what = 'resource') => new ServiceError('NOT_FOUND', `${what} not found`),
  ruleNotFound: (ruleId: string) => new ServiceError('RULE_NOT_FOUND', `rule "${ruleId}" not found`, [{ field: 'rule_id', message: 'no such rule' }]),
  noMatch: () => new ServiceError('ROUTING_NO_MATCH', 'no routing rule matches this transaction'),
  tenantNotFound: (id: string) => new ServiceError('TENANT_NOT_FOUND', `tenant "${id}" not found`, [{ field: 'tenant_id', message: 'no such tenant' }]),
  methodNotAllowed: (method: string, allowed: string[]) =>
    new ServiceError('METHOD_NOT_ALLOWED', `method ${method} is not allowed here; allowed: ${allowed.join(', ')}`, undefined, {
      Allow: allowed.join(', '),
    }),
  ruleExists: (ruleId: string) =>
    new ServiceError('RULE_ALREADY_EXISTS', `rule "${ruleId}" already exists`, [{ field: 'rule_id', message: 'already exists' }]),
  /** `holder` may be unknown when another replica's rule, not yet seen here, holds them. */
  sameAttributes: (ruleId: string, holder?: string) =>
    holder === undefined
      ? new ServiceError('RULE_ALREADY_EXISTS', `another rule already has these attributes; "${ruleId}" would never be chosen`, [
          { field: 'attributes', message: 'same as another rule (after padding with *)' },
        ])
      : new ServiceError('RULE_ALREADY_EXISTS', `rule "${holder}" already has these attributes; "${ruleId}" would never be chosen`, [
          { field: 'attributes', message: `same as rule "${holder}" (after padding with *)` },
        ]),
  rulesExist: (ruleIds: string[]) =>
    new ServiceError(
      'ONBOARDING_CONFLICT',
      `${ruleIds.length} generated rule id(s) already exist: ${ruleIds.slice(0, 10).join(', ')}${ruleIds.length > 10 ? ', ...' : ''}; nothing was created`,
      ruleIds.map((id) => ({ field: 'rule_id', message: `rule "${id}" already exists` })),
    ),
  tooLarge: (limit: number) => new ServiceError('PAYLOAD_TOO_LARGE', `request body exceeds ${limit} bytes`, [{ field: 'body', message: `larger than ${limit} bytes` }]),
  limit: (field: string, message: string) => new ServiceError('LIMIT_EXCEEDED', message, [{ field, message }]),
  unavailable: (message: string) => new ServiceError('SERVICE_UNAVAILABLE', message, undefined, { 'Retry-After': '1' }),
  internal: () => new ServiceError('INTERNAL_ERROR', 'internal error'),
  storageFull: () =>
    new ServiceError('STORAGE_FULL', 'the service is out of storage space; nothing was changed. Routing continues; retry once space is freed', undefined, {
      'Retry-After': '30',
    }),
  storageUnavailable: () =>
    new ServiceError('STORAGE_UNAVAILABLE', 'the store could not commit this write; nothing was changed. Retry later', undefined, { 'Retry-After': '5' }),
  rateLimited: (retryAfterS: number, rps: number, tenantId: string) =>
    new ServiceError('RATE_LIMITED', `rate limit of ${rps} requests per second for tenant "${tenantId}" (all its API keys together) exceeded`, [{ field: 'X-API-Key', message: 'too many requests for this tenant' }], {
      'Retry-After': String(retryAfterS),
    }),
  requestTimeout: () => new ServiceError('REQUEST_TIMEOUT', 'the request body did not arrive in time', [{ field: 'body', message: 'incomplete' }]),
  webhookNotFound: (id: string) =>
    new ServiceError('WEBHOOK_NOT_FOUND', `webhook "${id}" not found`, [{ field: 'webhook_id', message: 'no such webhook' }]),
  deliveryNotFound: (id: string) =>
    new ServiceError('DELIVERY_NOT_FOUND', `delivery "${id}" not found`, [{ field: 'delivery_id', message: 'no such delivery of this webhook' }]),
  overrideNotFound: (message: string, field: string) => new ServiceError('OVERRIDE_NOT_FOUND', message, [{ field, message: 'no override in force' }]),
  processorNotFound: (id: string) =>
    new ServiceError('PROCESSOR_NOT_FOUND', `no rule of this tenant has processor "${id}"`, [{ field: 'processor_id', message: 'no such processor in any rule' }]),
  decisionNotFound: (id: string) =>
    new ServiceError('DECISION_NOT_FOUND', `no decision recorded for transaction "${id}" (unknown, or older than the retention)`, [
      { field: 'transaction_id', message: 'no such decision' },
    ]),
  engineState: (message: string) => new ServiceError('ENGINE_STATE_CONFLICT', message, [{ field: 'rule_id', message }]),
  deliveryInProgress: (id: string) =>
    new ServiceError('DELIVERY_IN_PROGRESS', `delivery "${id}" is still pending; redeliver it once it has been delivered or has failed`, [
      { field: 'delivery_id', message: 'still pending' },
    ]),
};

/** The single error serializer. Unexpected errors become a generic 500 with no internals. */
export function errorBody(err: unknown): { status: number; body: string; headers?: Record<string, string> } {
  const e = err instanceof ServiceError ? err : errors.internal();
  const payload: Record<string, unknown> = { code: e.code, message: e.message, status: e.status };
  if (e.fields && e.fields.length > 0) payload.fields = e.fields;
  return { status: e.status, body: JSON.stringify({ error: payload }), headers: e.headers };
}
