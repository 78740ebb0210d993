// Preloaded (node --require) into servers started by test/helpers/server.ts. If the test
// process that started this server dies without stopping it (crash, SIGKILL of a vitest
// fork), the server is re-parented: it then stops itself instead of lingering.
'use strict';
const parent = process.ppid;
const timer = setInterval(() => {
  if (process.ppid === parent) return;
  clearInterval(timer);
  process.kill(process.pid, 'SIGTERM');
  setTimeout(() => process.exit(1), 5000).unref();
}, 1000);
timer.unref();
