/** Process entry point: start the service, stop it gracefully on SIGTERM/SIGINT. */
import { writeSync } from 'node:fs';
import { ConfigError, loadConfig } from './config.js';
import { log } from './log.js';
import { installProcessGuard } from './process-guard.js';
import { startService } from './service.js';
import { usageText } from './usage.js';
import { StartupError } from './startup-error.js';
import { StoreFileError } from './store/store-files.js';

async function main(): Promise<void> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    writeSync(1, `${usageText()}\n`);
    return;
  }
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
  const service = await startService(config);
  let signalled = false;
  const onSignal = (sig: string) => {
    if (signalled) return;
    signalled = true;
    log.info('stopping', { signal: sig });
    service.stop().then(
      () => process.exit(0),
      (e) => {
        log.error('stop failed', { err: String(e) });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
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
