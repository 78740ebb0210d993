/** Process entry point: start the service, stop it gracefully on SIGTERM/SIGINT. */
import { detachOneBuffer } from './detach-protector.js';
import { limitHeapGrowth } from './heap-growth.js';
import { keepScavengesOnOneCpu } from './gc-helpers.js';
import { writeSync } from 'node:fs';
import { ConfigError, loadConfig } from './config.js';
import { log } from './log.js';
import { installProcessGuard } from './process-guard.js';
import { startService, type RunningService } from './service.js';
import { usageText } from './usage.js';
import { StartupError } from './startup-error.js';
import { StoreFileError } from './store/store-files.js';

/**
 * SIGTERM and SIGINT are taken from the first line of main(), not once the service is up: a
 * signal's default action kills the process, and a start-up takes seconds on a loaded machine, so
 * a stop during it ended the process by the signal, half started (no exit code, the
 * data-directory lock left behind). A stop asked for during
 * start-up is carried out as soon as the service is up (the listener is closed again at once,
 * before any request is read), so it exits 0 like any other stop.
 */
function takeStopSignals(): { started(service: RunningService): void } {
  let signal: string | null = null;
  let service: RunningService | null = null;
  const stop = () => {
    service!.stop().then(
      () => process.exit(0),
      (e) => {
        log.error('stop failed', { err: String(e) });
        process.exit(1);
      },
    );
  };
  const onSignal = (sig: string) => {
    if (signal !== null) return;
    signal = sig;
    log.info('stopping', service === null ? { signal: sig, during: 'start-up' } : { signal: sig });
    if (service !== null) stop();
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
  return {
    started(s) {
      service = s;
      if (signal !== null) stop();
    },
  };
}

async function main(): Promise<void> {
  limitHeapGrowth(); // before any thread starts (heap-growth.ts)
  const gcFlags = keepScavengesOnOneCpu(); // likewise (gc-helpers.ts)
  detachOneBuffer(); // before anything of the service is optimised (detach-protector.ts)
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    writeSync(1, `${usageText()}\n`);
    return;
  }
  const signals = takeStopSignals();
  installProcessGuard();
  let config;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`configuration error: ${e.message}\n`);
      process.exit(2);
    }
    throw e;
  }
  if (gcFlags.length > 0) log.info('one CPU: young-generation collections run inside their pauses, without helper threads', { v8_flags: gcFlags.join(' ') });
  signals.started(await startService(config));
}

main().catch((e) => {
  // A damaged or vanished store has its own exit code: a supervisor must not restart in a loop.
  if (e instanceof StoreFileError) {
    log.error('store check failed', { err: e.message });
    process.stderr.write(`store error: ${e.message}\n`);
    process.exit(3);
  }
  if (e instanceof StartupError) {
    process.stderr.write(`start-up error: ${e.message}\n`);
    log.error('start failed', { err: e.message });
    process.exit(1);
  }
  log.error('start failed', { err: String((e as Error)?.stack ?? e) });
  process.exit(1);
});
