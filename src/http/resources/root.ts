/**
 * Liveness, metrics and documentation. Swagger UI and ReDoc are served from the installed
 * npm packages (no CDN: the service may run with no internet access).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../app-context.js';
import { errors } from '../../errors.js';
import { ErrorSchema } from '../../schemas/common.js';
import { ClusterStatusSchema } from '../../schemas/cluster.js';
import { endpoint, jsonBody, type Ctx, type Endpoint, type HiddenDoc, type Reply } from '../endpoint.js';
import { acceptsGzip, bufferChunks } from '../../metrics/scrape-cache.js';
import { BearerToken } from '../bearer-token.js';

const require = createRequire(import.meta.url);

/** Files served under /docs/ and /redoc/, by name (an allow-list: no path traversal). */
function assetTable(): Map<string, { path: string; type: string }> {
  const swagger = dirname(require.resolve('swagger-ui-dist/package.json'));
  const redoc = dirname(require.resolve('redoc/package.json'));
  return new Map([
    ['docs/swagger-ui.css', { path: join(swagger, 'swagger-ui.css'), type: 'text/css' }],
    ['docs/swagger-ui-bundle.js', { path: join(swagger, 'swagger-ui-bundle.js'), type: 'application/javascript' }],
    ['docs/favicon-32x32.png', { path: join(swagger, 'favicon-32x32.png'), type: 'image/png' }],
    ['redoc/redoc.standalone.js', { path: join(redoc, 'bundles', 'redoc.standalone.js'), type: 'application/javascript' }],
  ]);
}

/**
 * The pages use relative URLs, so they work behind a path prefix (a proxy serving the API
 * under /payments/ ...). `root` leads from the page back to the service root: `./` for
 * /docs, `../` for /docs/.
 */
const swaggerHtml = (root: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Payment Routing Engine · API docs</title>
<link rel="stylesheet" href="${root}docs/swagger-ui.css"><link rel="icon" href="${root}docs/favicon-32x32.png"></head>
<body><div id="swagger-ui"></div><script src="${root}docs/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: '${root}openapi.json', dom_id: '#swagger-ui', deepLinking: true });</script>
</body></html>`;

const redocHtml = (root: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Payment Routing Engine · API reference</title></head>
<body><redoc spec-url="${root}openapi.json"></redoc><script src="${root}redoc/redoc.standalone.js"></script></body></html>`;

export function rootEndpoints(app: AppContext, openApi: () => unknown): Endpoint[] {
  const assets = assetTable();
  const cache = new Map<string, Buffer>();
  const asset = (name: string) => {
    const a = assets.get(name);
    if (!a) throw errors.notFound(`asset ${name}`);
    let buf = cache.get(name);
    if (!buf) {
      buf = readFileSync(a.path);
      cache.set(name, buf);
    }
    return { status: 200, body: buf, contentType: a.type, headers: { 'Cache-Control': 'public, max-age=86400' } };
  };
  let openApiText: string | null = null;
  const token = app.config.metricsToken === null ? null : new BearerToken(app.config.metricsToken);
  const metrics = async (ctx: Ctx): Promise<Reply> => {
    if (token !== null && !token.matches(ctx.headers?.authorization ?? '')) throw errors.metricsUnauthorized();
    const scrape = await app.scrapes.get();
    const gz = acceptsGzip(ctx.headers?.['accept-encoding'] ?? '');
    return {
      status: 200,
      stream: bufferChunks(gz ? scrape.gzip : await scrape.plain()),
      contentType: app.metrics.registry.contentType,
      headers: gz ? { 'Content-Encoding': 'gzip', Vary: 'Accept-Encoding' } : { Vary: 'Accept-Encoding' },
    };
  };
  const html = (text: string) => () => ({ status: 200, body: text, contentType: 'text/html; charset=utf-8' });
  const hidden: HiddenDoc = { hidden: true };
  return [
    endpoint({
      method: 'GET',
      path: '/',
      auth: false,
      handler: () => ({
        status: 200,
        body: {
          service: 'payment-routing-engine',
          version: app.version,
          replica_id: app.config.replicaId,
          store: app.config.storeUrl === null ? 'lmdb' : 'postgres',
          ...(app.config.storeUrl === null && app.config.redis === null ? {} : { cluster: app.config.cluster }),
          ...(app.leadership !== undefined && { leadership: app.leadership.status() }),
        },
      }),
      doc: {
        summary: 'Liveness: the process answers',
        tag: 'Service',
        operationId: 'getLiveness',
        description: 'Says only that the process serves HTTP; `GET /ready` says whether it should get traffic.',
        responses: {
          200: jsonBody(
            'the service answers',
            Type.Object(
              {
                service: Type.String(),
                version: Type.String(),
                replica_id: Type.String({ description: 'SERVICE_REPLICA_ID (default host:port)' }),
                store: Type.Union([Type.Literal('lmdb'), Type.Literal('postgres')], { description: 'lmdb: embedded, one process; postgres: cluster mode (SERVICE_STORE_URL)' }),
                cluster: Type.Optional(Type.String({ description: 'SERVICE_CLUSTER, in cluster mode' })),
                leadership: Type.Optional(ClusterStatusSchema),
              },
              { $id: 'Liveness' },
            ),
            { service: 'payment-routing-engine', version: '0.1.0', replica_id: 'router-1:8000', store: 'lmdb' },
          ),
        },
      },
    }),
    endpoint({
      method: 'GET',
      path: '/metrics',
      auth: false,
      headers: ['authorization', 'accept-encoding'],
      handler: metrics,
      doc: {
        summary: 'Prometheus metrics (public)',
        tag: 'Monitoring',
        operationId: 'getMetrics',
        description:
          'Also served at `/metrics/` (the same answer). Rendered at most once per second; scrapers within that second share the text. Public unless `SERVICE_METRICS_TOKEN` is set, then `Authorization: Bearer <token>` is required (401 otherwise).',
        responses: {
          200: {
            description: 'text exposition format',
            contentType: 'text/plain; version=0.0.4; charset=utf-8',
            example: '# HELP service_transactions_routed_total routing decisions served\n# TYPE service_transactions_routed_total counter\nservice_transactions_routed_total 15230\n',
          },
          401: { description: 'SERVICE_METRICS_TOKEN is set and the bearer token is missing or wrong', schema: ErrorSchema, error: 'UNAUTHORIZED' },
        },
      },
    }),
    // The spec's path; documented under /metrics (a trailing slash upsets OpenAPI tooling).
    endpoint({ method: 'GET', path: '/metrics/', auth: false, headers: ['authorization', 'accept-encoding'], handler: metrics, doc: hidden }),
    endpoint({
      method: 'GET',
      path: '/openapi.json',
      auth: false,
      handler: () => ({ status: 200, body: (openApiText ??= JSON.stringify(openApi())) }),
      doc: {
        summary: 'This OpenAPI document',
        tag: 'Docs',
        operationId: 'getOpenApi',
        responses: {
          200: jsonBody(
            'OpenAPI 3.1',
            Type.Object({ openapi: Type.String(), info: Type.Object({ title: Type.String(), version: Type.String() }) }, { $id: 'OpenApiDocument', additionalProperties: true }),
            { openapi: '3.1.0', info: { title: 'Payment Routing Engine', version: '0.1.0' } },
          ),
        },
      },
    }),
    endpoint({ method: 'GET', path: '/docs', auth: false, handler: html(swaggerHtml('./')), doc: hidden }),
    endpoint({ method: 'GET', path: '/docs/', auth: false, handler: html(swaggerHtml('../')), doc: hidden }),
    endpoint({ method: 'GET', path: '/docs/{file}', auth: false, handler: (ctx) => asset(`docs/${ctx.params.file}`), doc: hidden }),
    endpoint({ method: 'GET', path: '/redoc', auth: false, handler: html(redocHtml('./')), doc: hidden }),
    endpoint({ method: 'GET', path: '/redoc/', auth: false, handler: html(redocHtml('../')), doc: hidden }),
    endpoint({ method: 'GET', path: '/redoc/{file}', auth: false, handler: (ctx) => asset(`redoc/${ctx.params.file}`), doc: hidden }),
  ];
}
