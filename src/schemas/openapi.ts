/** The OpenAPI 3.1 document, generated from the endpoints' TypeBox schemas. */
import type { Endpoint } from '../http/endpoint.js';

export function buildOpenApi(endpoints: Endpoint[], version: string, authEnabled: boolean): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const e of endpoints) {
    if (e.doc.hidden) continue;
    const params: unknown[] = [...e.path.matchAll(/\{([^}]+)\}/g)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    for (const q of e.doc.query ?? []) params.push({ name: q.name, in: 'query', required: false, description: q.description, schema: q.schema });
    const responses: Record<string, unknown> = {};
    for (const [status, r] of Object.entries(e.doc.responses)) {
      responses[status] = r.schema ? { description: r.description, content: { 'application/json': { schema: r.schema } } } : { description: r.description };
    }
    if (e.auth && authEnabled) responses['401'] = { description: 'missing or unknown X-API-Key' };
    const op: Record<string, unknown> = {
      summary: e.doc.summary,
      tags: [e.doc.tag],
      parameters: params,
      responses,
    };
    if (e.doc.description) op.description = e.doc.description;
    if (e.body) op.requestBody = { required: true, content: { 'application/json': { schema: e.body.schema } } };
    if (e.auth) op.security = [{ ApiKey: [] }];
    (paths[e.path] ??= {})[e.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Payment Routing Engine',
      version,
      description:
        'Asks before each payment which processor to use; told after it how it went; moves traffic away from failing processors. Errors are JSON `{error: {code, message, status, fields}}`.',
    },
    paths,
    components: { securitySchemes: { ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } } },
  };
}
