/**
 * The README's Quickstart, as the tests see it: the shell block between
 * `<!-- quickstart:begin -->` and `<!-- quickstart:end -->`, the environment its set-up line
 * starts the service with, and the curl commands in it (method, path, JSON body).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './server.js';

export const QUICKSTART_BASE = 'http://localhost:8000';

export interface CurlCommand {
  method: string;
  /** Path and query, with $BASE removed. */
  path: string;
  body: unknown;
  /** Whether it prints the answer (a line of its own), or sends it to /dev/null. */
  printsAnswer: boolean;
}

function readme(): string {
  return readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
}

/** The shell script of the Quickstart block. */
export function quickstartScript(): string {
  const m = /<!-- quickstart:begin -->\s*```sh\n([\s\S]*?)```\s*<!-- quickstart:end -->/.exec(readme());
  if (!m) throw new Error('README.md has no quickstart block');
  return m[1];
}

/** `SERVICE_API_KEYS=... npm start` in the Quickstart's set-up block: the environment it shows. */
export function quickstartServerEnv(): Record<string, string> {
  const text = readme();
  const start = text.indexOf('## Quickstart');
  const m = /^((?:[A-Z_]+=\S+ )*)npm start/m.exec(text.slice(start));
  if (!m) throw new Error('the Quickstart shows no `npm start` line');
  return Object.fromEntries(
    m[1]
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
}

/** The curl commands of the script, in order (a command may span lines ending in `\`). */
export function quickstartCurls(): CurlCommand[] {
  const joined = quickstartScript().replace(/\\\n\s*/g, ' ');
  const out: CurlCommand[] = [];
  for (const line of joined.split('\n')) {
    const at = line.indexOf('curl ');
    if (at < 0 || line.trimStart().startsWith('#')) continue;
    const cmd = line.slice(at);
    const method = /-X (\w+)/.exec(cmd)?.[1] ?? 'GET';
    const url = /"\$BASE([^"]*)"/.exec(cmd)?.[1];
    if (url === undefined) throw new Error(`a quickstart curl without "$BASE...": ${cmd}`);
    const data = /-d '([^']*)'/.exec(cmd)?.[1];
    out.push({ method, path: url, body: data === undefined ? undefined : JSON.parse(data), printsAnswer: !cmd.includes('-o /dev/null') });
  }
  return out;
}
