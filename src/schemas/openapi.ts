/**
 * The OpenAPI 3.1 document, generated from the endpoint declarations (src/http/resources/*):
 * their TypeBox schemas, examples and statuses. Schemas with a TypeBox `$id` become named
 * components (`#/components/schemas/<id>`), referenced wherever they are used; an unnamed
 * object body is named after its operation. The statuses the router answers for any endpoint
 * that can meet them (malformed body, authentication, rate limit, size, shutdown) are added
 * here as shared `components.responses`, so a new endpoint is documented completely by
 * declaring only its own. Field defaults are stated in descriptions, not as `default`
 * keywords (see SchemaRegistry.convert).
 */
import type { TSchema } from '@sinclair/typebox';
import { ErrorCodes, type ErrorCode } from '../errors.js';
import { ErrorSchema } from './common.js';
import { isHidden, type Endpoint, type EndpointDoc, type ResponseDoc } from '../http/endpoint.js';

type Json = Record<string, unknown>;

const TAGS: Record<string, string> = {
  Routing: 'Ask which processor to use for a payment; report how it went',
  Rules: 'Routing rules: which processors serve which transactions',
  Onboarding: 'Generate rules from a description of processors',
  Monitoring: 'Health, failover audit trail, statistics, shadow report, metrics',
  Configuration: 'Tier switches, thresholds and error-code classes',
  Webhooks: 'Event notifications and their deliveries',
  Tenants: 'Tenants visible to the caller',
  'Operator controls': 'Pin, drain, fail over and recover by hand, with expiry',
  Service: 'Liveness and readiness',
  Docs: 'This document',
};

/** Errors the router can answer, by status, with the catalogued code and when. */
const STANDARD: Record<string, { name: string; code: ErrorCode; description: string }> = {
  400: { name: 'MalformedJson', code: 'MALFORMED_JSON', description: 'the body is not valid JSON' },
  401: { name: 'Unauthorized', code: 'UNAUTHORIZED', description: 'missing or unknown X-API-Key (when SERVICE_API_KEYS is set)' },
  408: { name: 'RequestTimeout', code: 'REQUEST_TIMEOUT', description: 'the body did not arrive in time' },
  413: { name: 'PayloadTooLarge', code: 'PAYLOAD_TOO_LARGE', description: 'the body exceeds SERVICE_MAX_BODY_BYTES' },
  422: { name: 'ValidationFailed', code: 'VALIDATION_FAILED', description: 'invalid fields, each named by its JSON path in `error.fields`' },
  429: { name: 'RateLimited', code: 'RATE_LIMITED', description: 'per-key rate limit exceeded; retry after `Retry-After` seconds' },
  503: { name: 'ServiceUnavailable', code: 'SERVICE_UNAVAILABLE', description: 'shutting down, the request took too long, or the store could not commit a write; retry after `Retry-After` seconds' },
  507: { name: 'StorageFull', code: 'STORAGE_FULL', description: 'the store is out of space: nothing was changed (routing goes on); retry once space is freed' },
};

const FIELD_OF: Partial<Record<ErrorCode, string>> = {
  MALFORMED_JSON: 'body',
  UNAUTHORIZED: 'X-API-Key',
  REQUEST_TIMEOUT: 'body',
  PAYLOAD_TOO_LARGE: 'body',
  VALIDATION_FAILED: 'country',
  LIMIT_EXCEEDED: 'processors',
  RATE_LIMITED: 'X-API-Key',
  RULE_NOT_FOUND: 'rule_id',
  RULE_ALREADY_EXISTS: 'rule_id',
  ONBOARDING_CONFLICT: 'rule_id',
  TENANT_NOT_FOUND: 'tenant_id',
  WEBHOOK_NOT_FOUND: 'webhook_id',
  DELIVERY_NOT_FOUND: 'delivery_id',
  DELIVERY_IN_PROGRESS: 'delivery_id',
  ENGINE_STATE_CONFLICT: 'rule_id',
};

/** The error body an error code answers with (an example: the real message names the value). */
export function errorExample(code: ErrorCode, message: string): Json {
  const field = FIELD_OF[code];
  const error: Json = { code, message, status: ErrorCodes[code] };
  if (field) error.fields = [{ field, message }];
  return { error };
}

const pascal = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const errorRef = { $ref: '#/components/schemas/Error' };

/** Named schemas, hoisted out of the endpoint schemas. */
class SchemaRegistry {
  readonly schemas: Record<string, Json> = {};
  private readonly texts = new Map<string, string>();

  /** The schema as it appears in the document: named parts replaced by $refs. */
  ref(schema: TSchema | Json, nameIfObject?: string): Json {
    const s = schema as Json;
    const name = (s.$id as string | undefined) ?? (s.type === 'object' ? nameIfObject : undefined);
    if (name === undefined) return this.convert(s);
    const { $id: _omit, ...rest } = s;
    void _omit;
    const body = this.convert(rest);
    const text = JSON.stringify(body);
    const seen = this.texts.get(name);
    if (seen !== undefined && seen !== text) throw new Error(`two different schemas are named ${name}`);
    this.texts.set(name, text);
    this.schemas[name] = body;
    return { $ref: `#/components/schemas/${name}` };
  }

  private convert(s: Json): Json {
    const out: Json = {};
    // `default` would make openapi-typescript (and other generators) type the field as always
    // present, so a request that omits it would not compile; the default goes in the text.
    if (s.default !== undefined) {
      const d = s.description as string | undefined;
      out.description = d && /default/i.test(d) ? d : `${d ? `${d}; ` : ''}default ${JSON.stringify(s.default)}`;
    }
    for (const [k, v] of Object.entries(s)) {
      if (k === '$id' || k === 'default' || (k === 'description' && out.description !== undefined)) continue;
      if (k === 'patternProperties' && v && typeof v === 'object' && Object.keys(v).length === 1 && '^(.*)$' in (v as Json)) {
        // TypeBox's Record(String, X): a map with any keys, as generators expect it.
        out.additionalProperties = this.ref((v as Json)['^(.*)$'] as Json);
      } else if (k === 'properties' || k === '$defs') {
        out[k] = Object.fromEntries(Object.entries(v as Json).map(([p, ps]) => [p, this.ref(ps as Json)]));
      } else if (k === 'items' || k === 'additionalProperties' || k === 'not') {
        out[k] = typeof v === 'object' && v !== null ? this.ref(v as Json) : v;
      } else if (k === 'anyOf' || k === 'oneOf' || k === 'allOf') {
        out[k] = (v as Json[]).map((x) => this.ref(x));
      } else out[k] = v;
    }
    return out;
  }
}

function responseObject(reg: SchemaRegistry, doc: ResponseDoc, status: string, opName: string): Json {
  const r = doc as { description: string; schema?: TSchema; example?: unknown; error?: ErrorCode; contentType?: string };
  if (r.error !== undefined) {
    return { description: r.description, content: { 'application/json': { schema: errorRef, example: errorExample(r.error, r.description) } } };
  }
  if (r.schema !== undefined) {
    const name = `${pascal(opName)}${status === '200' || status === '201' || status === '202' ? '' : status}Response`;
    return { description: r.description, content: { 'application/json': { schema: reg.ref(r.schema, name), example: r.example } } };
  }
  if (r.contentType !== undefined) return { description: r.description, content: { [r.contentType]: { schema: { type: 'string' }, example: r.example } } };
  return { description: r.description };
}

export function buildOpenApi(endpoints: Endpoint[], version: string, authEnabled: boolean): Json {
  const reg = new SchemaRegistry();
  reg.ref(ErrorSchema);
  const paths: Record<string, Json> = {};
  const operationIds = new Set<string>();
  const usedStandard = new Set<number>();
  const tags = new Set<string>();
  for (const e of endpoints) {
    if (isHidden(e.doc)) continue;
    const doc: EndpointDoc = e.doc;
    if (operationIds.has(doc.operationId)) throw new Error(`operationId ${doc.operationId} is used twice`);
    operationIds.add(doc.operationId);
    tags.add(doc.tag);
    const params: Json[] = [...e.path.matchAll(/\{([^}]+)\}/g)].map((m) => {
      const p: Json = { name: m[1], in: 'path', required: true, schema: { type: 'string' } };
      const ex = doc.pathExamples?.[m[1]];
      if (ex !== undefined) p.example = ex;
      return p;
    });
    for (const q of doc.query ?? []) params.push({ name: q.name, in: 'query', required: false, description: q.description, schema: q.schema });

    const responses: Record<string, Json> = {};
    for (const [status, r] of Object.entries(doc.responses)) responses[status] = responseObject(reg, r, status, doc.operationId);
    const standard = (status: number) => {
      if (status in responses) return;
      responses[status] = { $ref: `#/components/responses/${STANDARD[status].name}` };
      usedStandard.add(status);
    };
    if (e.body) [400, 408, 413, 422].forEach(standard);
    if ((doc.query ?? []).length > 0) standard(422);
    if (e.auth) [401, 429].forEach(standard);
    if (e.method !== 'GET' && doc.writesStore !== false) standard(507);
    standard(503);

    const op: Json = { operationId: doc.operationId, summary: doc.summary, tags: [doc.tag] };
    if (doc.description) op.description = doc.description;
    if (params.length > 0) op.parameters = params;
    if (e.body) {
      op.requestBody = {
        required: true,
        content: { 'application/json': { schema: reg.ref(e.body.schema, `${pascal(doc.operationId)}Request`), example: e.doc.requestExample } },
      };
    }
    op.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b)));
    // Every /v1/ operation needs a key whenever keys are configured; the others are public.
    op.security = e.auth ? [{ ApiKey: [] }] : [];
    (paths[e.path] ??= {})[e.method.toLowerCase()] = op;
  }

  const standardResponses = Object.fromEntries(
    [...usedStandard].sort().map((status) => STANDARD[status]).map((s) => [
      s.name,
      { description: s.description, content: { 'application/json': { schema: errorRef, example: errorExample(s.code, s.description) } } },
    ]),
  );
  return {
    openapi: '3.1.0',
    info: {
      title: 'Payment Routing Engine',
      version,
      description:
        'Asks before each payment which processor to use; told after it how it went; moves traffic away from failing processors. ' +
        'Errors are JSON `{error: {code, message, status, fields}}`. A method a path does not serve answers 405 with an `Allow` header. ' +
        `Authentication: \`X-API-Key\` on every /v1/ operation when SERVICE_API_KEYS is set (${authEnabled ? 'it is set on this instance' : 'it is not set on this instance: development mode'}).`,
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    // Relative: the document works behind a path prefix (calls go where it was loaded from).
    servers: [{ url: '.', description: 'this service' }],
    security: [{ ApiKey: [] }],
    tags: [...tags].map((name) => ({ name, description: TAGS[name] ?? name })),
    paths,
    components: {
      schemas: reg.schemas,
      responses: standardResponses,
      securitySchemes: { ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'a key from SERVICE_API_KEYS; it selects the tenant' } },
    },
  };
}
