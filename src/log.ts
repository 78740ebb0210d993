/**
 * A small structured logger: one JSON line per event on stdout. Never pass API keys or
 * webhook secrets to it; request paths and ids only.
 */
const LEVELS = { debug: 10, info: 20, warn: 30, error: 40 } as const;
export type LogLevel = keyof typeof LEVELS;

let threshold: number = LEVELS.info;
/** Fields on every line (cluster mode: the replica's name). */
let context: Record<string, unknown> = {};

export function setLogContext(fields: Record<string, unknown>): void {
  context = { ...fields };
}

export function setLogLevel(level: LogLevel): void {
  threshold = LEVELS[level];
}

function write(level: LogLevel, msg: string, fields?: Record<string, unknown>): void {
  if (LEVELS[level] < threshold) return;
  const line = JSON.stringify({ time: new Date().toISOString(), level, msg, ...context, ...fields });
  if (LEVELS[level] >= LEVELS.warn) process.stderr.write(line + '\n');
  else process.stdout.write(line + '\n');
}

export const log = {
  debug: (msg: string, fields?: Record<string, unknown>) => write('debug', msg, fields),
  info: (msg: string, fields?: Record<string, unknown>) => write('info', msg, fields),
  warn: (msg: string, fields?: Record<string, unknown>) => write('warn', msg, fields),
  error: (msg: string, fields?: Record<string, unknown>) => write('error', msg, fields),
};
