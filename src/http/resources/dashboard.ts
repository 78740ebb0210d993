/**
 * GET /dashboard: the live operator dashboard, a static page shipped in the repository
 * (`dashboard/`), served from disk (read once, then cached), nothing from a CDN. The page is
 * public; everything it shows comes from the /v1/ API with the key the operator enters.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { errors } from '../../errors.js';
import { endpoint, type Endpoint, type HiddenDoc } from '../endpoint.js';

const DIR = fileURLToPath(new URL('../../../../dashboard/', import.meta.url));
/** An allow-list: no path is ever built from the request. */
const FILES = new Map([
  ['index.html', 'text/html; charset=utf-8'],
  ['dashboard.js', 'application/javascript; charset=utf-8'],
  ['dashboard.css', 'text/css; charset=utf-8'],
]);

export function dashboardEndpoints(): Endpoint[] {
  const cache = new Map<string, Buffer>();
  const file = (name: string) => {
    const type = FILES.get(name);
    if (type === undefined) throw errors.notFound(`dashboard file ${name}`);
    let buf = cache.get(name);
    if (buf === undefined) cache.set(name, (buf = readFileSync(DIR + name)));
    return { status: 200, body: buf, contentType: type, headers: { 'Cache-Control': 'no-cache' } };
  };
  const hidden: HiddenDoc = { hidden: true };
  return [
    endpoint({ method: 'GET', path: '/dashboard', auth: false, handler: () => file('index.html'), doc: hidden }),
    endpoint({ method: 'GET', path: '/dashboard/', auth: false, handler: () => file('index.html'), doc: hidden }),
    endpoint({ method: 'GET', path: '/dashboard/{file}', auth: false, handler: (ctx) => file(ctx.params.file), doc: hidden }),
  ];
}
