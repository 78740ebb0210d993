/**
 * A start-up failure the operator has to fix (busy port, data directory in use by another
 * process): main prints its message as one line and exits 1, without a stack trace.
 */
export class StartupError extends Error {
  override name = 'StartupError';
}
