/**
 * Command-line options of the bench and tool scripts: node's parseArgs plus `--help`, which
 * prints the usage, a summary and every option with its default, and exits 0. A bad option
 * prints one line naming it (no stack trace) and exits 2.
 *
 *   const o = parseCli({
 *     usage: 'npm run simulate -- --scenario NAME [options]',
 *     summary: 'Drives a running engine ...',
 *     options: { rate: { type: 'string', default: '50' } },
 *     help: { rate: 'payments per second' },
 *   });
 */
import { writeSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';

type OptionsConfig = NonNullable<ParseArgsConfig['options']>;

export interface CliSpec<O extends OptionsConfig> {
  /** How to call it, e.g. `npm run simulate -- --scenario NAME [options]`. */
  usage: string;
  /** What it does and what it prints or writes. */
  summary: string;
  options: O;
  /** One line per option (the default is appended from `options`). */
  help: { [K in keyof O]: string };
  /** Extra paragraphs after the options. */
  notes?: string;
}

/** A spec whose command also takes arguments that are not options (e.g. a path). */
export interface CliSpecWithArgs<O extends OptionsConfig> extends CliSpec<O> {
  /** How many such arguments it needs at least (fewer: the usage line and exit 2). */
  minArgs: number;
}

type Values<O extends OptionsConfig> = ReturnType<typeof parseArgs<{ args: string[]; options: O; strict: true }>>['values'];

/** Synchronous: the text is complete on a pipe even though the process exits right after. */
function print(fd: 1 | 2, text: string): void {
  writeSync(fd, text.endsWith('\n') ? text : `${text}\n`);
}

export function helpText<O extends OptionsConfig>(spec: CliSpec<O>): string {
  const rows: [string, string][] = Object.entries(spec.options).map(([name, o]) => {
    const flag = `${o.short ? `-${o.short}, ` : ''}--${name}${o.type === 'string' ? ` ${name.toUpperCase().replace(/-/g, '_')}` : ''}`;
    const def = o.default === undefined || o.default === false ? '' : ` (default ${Array.isArray(o.default) ? o.default.join(',') : String(o.default)})`;
    return [flag, `${spec.help[name]}${def}`];
  });
  rows.push(['-h, --help', 'show this help and exit']);
  const width = Math.max(...rows.map(([f]) => f.length)) + 2;
  const lines = [`Usage: ${spec.usage}`, '', spec.summary, '', 'Options:', ...rows.map(([f, d]) => `  ${f.padEnd(width)}${d}`)];
  if (spec.notes) lines.push('', spec.notes);
  return lines.join('\n');
}

/** Parsed option values; prints the help and exits 0 on --help, prints the error and exits 2 on a bad option. */
export function parseCli<const O extends OptionsConfig>(spec: CliSpec<O>, argv: string[] = process.argv.slice(2)): Values<O> {
  return parse(spec, argv, false).values;
}

/** As parseCli, and the arguments that are not options (at least `spec.minArgs` of them). */
export function parseCliWithArgs<const O extends OptionsConfig>(spec: CliSpecWithArgs<O>, argv: string[] = process.argv.slice(2)): { values: Values<O>; args: string[] } {
  const parsed = parse(spec, argv, true);
  if (parsed.args.length < spec.minArgs) {
    print(2, `Usage: ${spec.usage}\nRun with --help for the options.`);
    process.exit(2);
  }
  return parsed;
}

function parse<O extends OptionsConfig>(spec: CliSpec<O>, argv: string[], allowPositionals: boolean): { values: Values<O>; args: string[] } {
  const withHelp = { ...spec.options, help: { type: 'boolean', short: 'h' } } as O;
  let values: Values<O> & { help?: boolean };
  let args: string[];
  try {
    const parsed = parseArgs({ args: argv, options: withHelp, strict: true, allowPositionals });
    values = parsed.values as Values<O> & { help?: boolean };
    args = parsed.positionals;
  } catch (e) {
    print(2, `${(e as Error).message}\nRun with --help for the options.`);
    process.exit(2);
  }
  if (values.help) {
    print(1, helpText(spec));
    process.exit(0);
  }
  delete values.help;
  return { values, args };
}
