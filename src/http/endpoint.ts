/** What a resource module declares: one endpoint per method and path template. */
import type { TSchema } from '@sinclair/typebox';
import type { Validator } from '../schemas/common.js';
import type { KeyGrant } from './api-keys.js';

export type Method = 'GET' | 'POST' | 'DELETE' | 'PUT' | 'PATCH';

export interface Ctx {
  method: Method;
  /** Path template, e.g. /v1/rules/{rule_id}: the metrics label. */
  template: string;
  params: Record<string, string>;
  /** Parsed on first use. */
  readonly query: URLSearchParams;
  /** The caller's tenant (and admin flag); `default` in development mode. */
  grant: KeyGrant;
}

export interface Reply {
  status: number;
  /** An object is serialized as JSON; a string or Buffer is sent as is. */
  body?: unknown;
  contentType?: string;
  headers?: Record<string, string>;
}

export interface QueryParamDoc {
  name: string;
  description: string;
  schema: Record<string, unknown>;
}

export interface EndpointDoc {
  summary: string;
  tag: string;
  description?: string;
  query?: QueryParamDoc[];
  responses: Record<number, { description: string; schema?: TSchema }>;
  /** Hide from the OpenAPI document (asset routes). */
  hidden?: boolean;
}

export interface Endpoint<B = unknown> {
  method: Method;
  path: string;
  /** Needs an API key when authentication is enabled (every /v1/ path). */
  auth: boolean;
  body?: Validator<B>;
  handler(ctx: Ctx, body: B): Reply | Promise<Reply>;
  doc: EndpointDoc;
}

export function endpoint<B>(e: Endpoint<B>): Endpoint<unknown> {
  return e as Endpoint<unknown>;
}
