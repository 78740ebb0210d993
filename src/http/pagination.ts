/**
 * Cursor pagination of newest-first lists: `limit` (1..max, default given) and `after` (the
 * id of the last item of the previous page). A full page carries `Link: <...>; rel="next"`.
 */
import { errors } from '../errors.js';
import type { Ctx } from './endpoint.js';

export interface PageRequest {
  limit: number;
  after: string | undefined;
}

export function pageRequest(ctx: Ctx, max: number, dflt: number, isCursor: (c: string) => boolean): PageRequest {
  const raw = ctx.query.get('limit');
  let limit = dflt;
  if (raw !== null) {
    if (!/^\d{1,7}$/.test(raw) || Number(raw) < 1 || Number(raw) > max) throw errors.field('limit', `must be an integer from 1 to ${max}`);
    limit = Number(raw);
  }
  const after = ctx.query.get('after') ?? undefined;
  if (after !== undefined && !isCursor(after)) throw errors.field('after', 'must be an id from an earlier page');
  return { limit, after };
}

/** The `Link` header of a page whose last item is `lastId` (none when the page is not full). */
export function nextLink(path: string, page: PageRequest, count: number, lastId: string | undefined): Record<string, string> | undefined {
  if (count < page.limit || lastId === undefined) return undefined;
  return { Link: `<${path}?limit=${page.limit}&after=${encodeURIComponent(lastId)}>; rel="next"` };
}

/**
 * Id-ordered pages (rules, rule health): `limit` (default 1000, max 10,000) and `after` (the
 * last id of the previous page, exclusive). Ids sort by their bytes, the store's key order.
 */
export const ID_PAGE_DEFAULT = 1000;
export const ID_PAGE_MAX = 10_000;

export function idPageRequest(ctx: Ctx, isId: (id: string) => boolean): PageRequest {
  return pageRequest(ctx, ID_PAGE_MAX, ID_PAGE_DEFAULT, isId);
}
