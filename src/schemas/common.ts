/**
 * Shared schema pieces and the validator compiler. Schemas are TypeBox (JSON Schema), compiled
 * once at start; the same objects generate the OpenAPI document.
 */
import { Type, type TSchema, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';
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
        issues.push({ field, message: issueMessage(e) });
        if (issues.length >= 20) break;
      }
      if (issues.length === 0) issues.push({ field: 'body', message: 'invalid' });
      throw errors.validation(issues);
    },
  };
}

/**
 * What a failing value should have been, in words a client developer can act on. TypeBox's
 * own messages name the check, not the remedy ("Expected union value").
 */
function issueMessage(e: ValueError): string {
  if (e.type === ValueErrorType.ObjectRequiredProperty) return 'is required';
  if (e.type === ValueErrorType.ObjectAdditionalProperties) return 'is not a known field (unknown fields are rejected; see /docs)';
  if (e.type === ValueErrorType.Union) {
    // A value of the right kind that breaks a bound (amount: -5 against number-or-null) is
    // better told the bound than the list of kinds.
    const branches = (e.schema.anyOf ?? []) as TSchema[];
    for (let i = 0; i < branches.length; i++) {
      if (sameKind(branches[i], e.value)) {
        const inner = e.errors[i]?.First();
        if (inner) return issueMessage(inner);
      }
    }
    return `must be ${describeSchema(e.schema)}`;
  }
  return e.message;
}

function sameKind(schema: TSchema, value: unknown): boolean {
  if (schema.const !== undefined || Array.isArray(schema.anyOf)) return false;
  switch (schema.type) {
    case 'number':
    case 'integer':
      return typeof value === 'number';
    case 'string':
      return typeof value === 'string';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return value !== null && typeof value === 'object' && !Array.isArray(value);
    default:
      return false;
  }
}

/** "one of card, bank_transfer, wallet, bnpl", "a number or null", "one of micro, standard or null". */
export function describeSchema(schema: TSchema): string {
  const literals: string[] = [];
  const kinds: string[] = [];
  const visit = (s: TSchema) => {
    if (Array.isArray(s.anyOf)) for (const b of s.anyOf as TSchema[]) visit(b);
    else if (s.const !== undefined) literals.push(String(s.const));
    else if (s.type === 'null') kinds.push('null');
    else if (s.type === 'integer') kinds.push('an integer');
    else if (s.type === 'number') kinds.push('a number');
    else if (s.type === 'string') kinds.push('a string');
    else if (s.type === 'boolean') kinds.push('true or false');
    else if (s.type === 'array') kinds.push('an array');
    else if (s.type === 'object') kinds.push('an object');
    else kinds.push('a valid value');
  };
  visit(schema);
  const parts = literals.length > 0 ? [`one of ${literals.join(', ')}`, ...kinds] : kinds;
  return parts.length <= 1 ? (parts[0] ?? 'a valid value') : `${parts.slice(0, -1).join(', ')} or ${parts[parts.length - 1]}`;
}
