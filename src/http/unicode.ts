/**
 * Lone UTF-16 surrogates. JSON text may spell them as escapes (`"\ud800"`); JavaScript keeps
 * them, but the store encodes strings as UTF-8, where they have no representation: a stored
 * rule attribute, processor name or webhook secret would come back different after a restart
 * (U+FFFD). Such strings are refused at the door (422 naming the field).
 */

/** Only a body with a `\uD800`-`\uDFFF` escape can hold one (raw bytes are decoded as UTF-8, which never yields one). */
const SURROGATE_ESCAPE = /\\u[dD][89abcdefABCDEF]/;

/** A high surrogate not followed by a low one, or a low one not preceded by a high one (code units, no `u` flag). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const wellFormed = (s: string) => !LONE_SURROGATE.test(s);

export function mayHoldLoneSurrogate(jsonText: string): boolean {
  return SURROGATE_ESCAPE.test(jsonText);
}

/**
 * The JSON path of the first string (or object key) holding a lone surrogate, or null.
 * Iterative: a deeply nested body must not exhaust the stack.
 */
export function loneSurrogatePath(value: unknown): string | null {
  const stack: { v: unknown; path: string }[] = [{ v: value, path: '' }];
  while (stack.length > 0) {
    const { v, path } = stack.pop()!;
    if (typeof v === 'string') {
      if (!wellFormed(v)) return path || 'body';
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], path: `${path}[${i}]` });
    } else if (v !== null && typeof v === 'object') {
      for (const k of Object.keys(v)) {
        const p = path === '' ? k : `${path}.${k}`;
        if (!wellFormed(k)) return path || 'body';
        stack.push({ v: (v as Record<string, unknown>)[k], path: p });
      }
    }
  }
  return null;
}
