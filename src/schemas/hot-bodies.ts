/**
 * Hand-written checks for the two hot bodies (POST /v1/route, POST /v1/outcome). Each accepts
 * only bodies the compiled TypeBox schema accepts too — the plain shapes clients send — and
 * answers false for anything else (an unknown or unusual field, a wrong type, a bound broken),
 * which then goes through the full schema check for its verdict and its error messages. So the
 * contract stays the schema's; this is a shortcut for the common case, about a tenth of the
 * compiled check's cost (no regular expression, no union walk).
 */
import { AMOUNT_TIERS } from '../routing/amount-tier.js';
import { MAX_ID_LENGTH } from './common.js';
import { PAYMENT_METHODS, TRANSACTION_TYPES } from './routing.js';

const isLetter = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);

function letters(v: unknown, n: number): boolean {
  if (typeof v !== 'string' || v.length !== n) return false;
  for (let i = 0; i < n; i++) if (!isLetter(v.charCodeAt(i))) return false;
  return true;
}

/** ID_PATTERN `^[A-Za-z0-9_.:-]+$`, 1..MAX_ID_LENGTH characters. */
function isId(v: unknown): boolean {
  if (typeof v !== 'string' || v.length === 0 || v.length > MAX_ID_LENGTH) return false;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (!(isLetter(c) || (c >= 48 && c <= 58) || c === 95 || c === 46 || c === 45)) return false; // 0-9 and ':' are 48-58
  }
  return true;
}

const oneOf = (list: readonly string[]) => (v: unknown) => typeof v === 'string' && list.includes(v);
const isPaymentMethod = oneOf(PAYMENT_METHODS);
const isTransactionType = oneOf(TRANSACTION_TYPES);
const isAmountTier = oneOf(AMOUNT_TIERS);
const numberIn = (v: unknown, min: number, max: number) => typeof v === 'number' && v >= min && v <= max;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A RouteRequest in its plain form (see the module comment). */
export function plainRouteRequest(v: unknown): boolean {
  if (!isObject(v)) return false;
  let seen = 0;
  for (const k in v) {
    const x = v[k];
    switch (k) {
      case 'country':
        if (!letters(x, 2)) return false;
        break;
      case 'currency':
        if (!letters(x, 3)) return false;
        break;
      case 'payment_method':
        if (!isPaymentMethod(x)) return false;
        break;
      case 'card_type':
        if (typeof x !== 'string' || x.length === 0 || x.length > 64) return false;
        break;
      case 'transaction_type':
        if (!isTransactionType(x)) return false;
        break;
      case 'amount':
        if (x !== null && !numberIn(x, 0, 1e15)) return false;
        break;
      case 'amount_tier':
        if (x !== null && !isAmountTier(x)) return false;
        break;
      case 'transaction_id':
        if (!isId(x)) return false;
        break;
      default:
        return false;
    }
    seen++;
  }
  return seen >= 2 && typeof v.country === 'string' && typeof v.currency === 'string';
}

/** An OutcomeReport in its plain form (see the module comment). */
export function plainOutcomeReport(v: unknown): boolean {
  if (!isObject(v)) return false;
  for (const k in v) {
    const x = v[k];
    switch (k) {
      case 'rule_id':
      case 'processor_id':
      case 'transaction_id':
        if (!isId(x)) return false;
        break;
      case 'success':
        if (typeof x !== 'boolean') return false;
        break;
      case 'latency_ms':
        if (!numberIn(x, 0, 3_600_000)) return false;
        break;
      case 'error_code':
        if (x !== null && (typeof x !== 'string' || x.length > MAX_ID_LENGTH)) return false;
        break;
      default:
        return false;
    }
  }
  return v.rule_id !== undefined && v.processor_id !== undefined && v.success !== undefined && v.latency_ms !== undefined;
}
