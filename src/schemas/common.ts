/**
 * Shared schema pieces and the validator compiler. Schemas are TypeBox (JSON Schema), compiled
 * once at start; the same objects generate the OpenAPI document.
 */
import { Type, type TSchema, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { errors, type FieldIssue } from '../errors.js';

/** Identifiers appear in URL paths, so they are limited to URL-safe characters. */
export const ID_PATTERN = '^[A-Za-z0-9_.:-]+$';
export const MAX_ID_LENGTH = 128;
export const MAX_NAME_LENGTH = 256;

export const Id = (description: string) =>
  Type.String({ minLength: 1, maxLength: MAX_ID_LENGTH, pattern: ID_PATTERN, description });

export const Name = (description: string) => Type.String({ minLength: 1, maxLength: MAX_NAME_LENGTH, description });

export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

export const ErrorSchema = Type.Object(
  {
    error: Type.Object({
      code: Type.String({ description: 'stable machine code, e.g. VALIDATION_FAILED' }),
      message: Type.String({ description: 'human-readable message naming the field' }),
      status: Type.Integer(),
      fields: Type.Optional(
        Type.Array(Type.Object({ field: Type.String(), message: Type.String() }), {
          description: 'the failing fields, as JSON paths',
        }),
      ),
    }),
  },
  { $id: 'Error' },
);

/** JSON pointer "/processors/1/countries/0" → "processors[1].countries[0]". */
export function pointerToField(pointer: string): string {
  if (pointer === '' || pointer === '/') return 'body';
  let out = '';
  for (const raw of pointer.split('/').slice(1)) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (/^\d+$/.test(seg)) out += `[${seg}]`;
    else out += out === '' ? seg : `.${seg}`;
  }
  return out;
}

export interface Validator<T> {
  schema: TSchema;
  /** Returns the value typed, or throws a 422 listing every failing field. */
  parse(value: unknown): T;
}

/**
 * `plain`, if given, is a cheaper check that accepts a subset of what the schema accepts (the
 * hot bodies' usual shape, see hot-bodies.ts); what it does not accept gets the full check.
 */
export function compile<S extends TSchema>(schema: S, plain?: (value: unknown) => boolean): Validator<Static<S>> {
  const checker = TypeCompiler.Compile(schema);
  return {
    schema,
    parse(value: unknown): Static<S> {
      if ((plain !== undefined && plain(value)) || checker.Check(value)) return value as Static<S>;
      const issues: FieldIssue[] = [];
      const seen = new Set<string>();
      for (const e of checker.Errors(value)) {
        const field = pointerToField(e.path);
        // Union failures repeat per branch; one message per field is clearer.
        if (seen.has(field)) continue;
        seen.add(field);
        issues.push({ field, message: e.message === 'Expected required property' ? 'is required' : e.message });
        if (issues.length >= 20) break;
      }
      if (issues.length === 0) issues.push({ field: 'body', message: 'invalid' });
      throw errors.validation(issues);
    },
  };
}
