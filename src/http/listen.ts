/**
 * Listening on the service port, exclusively. uWebSockets.js listens with SO_REUSEPORT by
 * default: a second instance on a busy port would start "successfully" and the kernel would
 * split connections between two engines with different state. With
 * LIBUS_LISTEN_EXCLUSIVE_PORT a busy port is a start-up error instead.
 */
import type { TemplatedApp, us_listen_socket } from '@trufflesuite/uws-js-unofficial';
import { StartupError } from '../startup-error.js';

/** uSockets' LIBUS_LISTEN_EXCLUSIVE_PORT (listen without SO_REUSEPORT). */
const LISTEN_EXCLUSIVE_PORT = 1;

// The native listen also takes (host, port, options, cb); the bundled typings omit that overload.
type ListenWithOptions = (host: string, port: number, options: number, cb: (s: us_listen_socket | false) => void) => TemplatedApp;

export function listenExclusive(app: TemplatedApp, host: string, port: number): Promise<us_listen_socket> {
  return new Promise((resolve, reject) => {
    (app.listen as unknown as ListenWithOptions).call(app, host, port, LISTEN_EXCLUSIVE_PORT, (sock) =>
      sock
        ? resolve(sock)
        : reject(new StartupError(`cannot listen on ${host}:${port}: the port is in use by another process (or not permitted); choose another PORT`)),
    );
  });
}
