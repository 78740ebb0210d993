/**
 * Which failed outcomes are the processor's fault. Health (Tier 1) counts technical errors
 * only: a processor that answers "insufficient funds" is working. Declines still count
 * against the success rate (and against a processor in the Tier 3 bandit).
 *
 * Default classification of a failed outcome's `error_code` (case-insensitive):
 *   - no code (null/empty)                                  → technical error
 *   - a timeout code (timeout, *timed_out*, *_timeout, 504)  → technical error, timeout
 *   - a known decline code, or one containing a decline word → issuer decline
 *   - anything else (processor_unavailable, 5xx, network...) → technical error
 * A tenant can add codes to either class (its engine configuration); its additions win.
 */
import { OutcomeKind } from '../shm/window.js';

export const DEFAULT_DECLINE_CODES: readonly string[] = [
  'do_not_honor', 'insufficient_funds', 'card_declined', 'declined', 'generic_decline', 'expired_card',
  'incorrect_cvc', 'invalid_cvc', 'incorrect_number', 'invalid_number', 'invalid_expiry_month', 'invalid_expiry_year',
  'fraud', 'fraudulent', 'suspected_fraud', 'stolen_card', 'lost_card', 'pickup_card', 'restricted_card',
  'card_not_supported', 'currency_not_supported', 'card_velocity_exceeded', 'withdrawal_count_limit_exceeded',
  'invalid_account', 'invalid_amount', 'authentication_required', 'approve_with_id', 'call_issuer',
  'new_account_information_available', 'no_action_taken', 'not_permitted', 'revocation_of_authorization',
  'security_violation', 'service_not_allowed', 'stop_payment_order', 'testmode_decline', 'transaction_not_allowed',
  'try_again_later_issuer', 'risk_rejected', 'blocked',
  // ISO 8583 response codes that mean the issuer declined
  '05', '14', '41', '43', '51', '54', '55', '57', '59', '61', '62', '65', 'n7',
];

const DECLINE_WORDS = /declin|insufficient|fraud|expired|cvc|cvv|stolen|lost_card|honou?r|invalid_card|restricted/;
const TIMEOUT_CODE = /timeout|timed_out|^http_504$|^504$/;

export interface ErrorCodeOverrides {
  decline: ReadonlySet<string>;
  technical: ReadonlySet<string>;
}

export const NO_OVERRIDES: ErrorCodeOverrides = { decline: new Set(), technical: new Set() };

const defaultDeclines = new Set(DEFAULT_DECLINE_CODES);

export function classifyOutcome(
  success: boolean,
  errorCode: string | null | undefined,
  overrides: ErrorCodeOverrides = NO_OVERRIDES,
): OutcomeKind {
  if (success) return OutcomeKind.Success;
  if (!errorCode) return OutcomeKind.TechError;
  const code = errorCode.trim().toLowerCase();
  if (code === '') return OutcomeKind.TechError;
  if (overrides.technical.has(code)) return TIMEOUT_CODE.test(code) ? OutcomeKind.Timeout : OutcomeKind.TechError;
  if (overrides.decline.has(code)) return OutcomeKind.Decline;
  if (TIMEOUT_CODE.test(code)) return OutcomeKind.Timeout;
  if (defaultDeclines.has(code) || DECLINE_WORDS.test(code)) return OutcomeKind.Decline;
  return OutcomeKind.TechError;
}
