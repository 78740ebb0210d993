/** holdsPort (test helper): tells the process listening on a port from another one. */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { holdsPort } from '../helpers/port-owner.js';

describe.skipIf(process.platform !== 'linux')('holdsPort', () => {
  it('is true for the listening process only', async () => {
    const srv = createServer();
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const port = (srv.address() as { port: number }).port;
    // Another process listening on a port of its own.
    const child = spawn(process.execPath, ['-e', `require('net').createServer().listen(0, '127.0.0.1', function () { console.log(this.address().port) })`], { stdio: ['ignore', 'pipe', 'inherit'] });
    const childPort = Number(await new Promise<string>((r) => child.stdout!.once('data', (d) => r(String(d)))));
    try {
      expect(holdsPort(process.pid, port)).toBe(true);
      expect(holdsPort(child.pid!, port)).toBe(false);
      expect(holdsPort(child.pid!, childPort)).toBe(true);
      expect(holdsPort(process.pid, childPort)).toBe(false);
    } finally {
      child.kill();
      srv.close();
    }
  });
});
