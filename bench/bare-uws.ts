/**
 * The ceiling: a bare uWebSockets.js server that reads a POST body and answers a fixed JSON
 * of the same size as a routing decision. Run as a child process by the benchmarks.
 */
import uws, { type HttpResponse } from '@trufflesuite/uws-js-unofficial';

const body = process.env.BARE_BODY ?? '{}';
const port = Number(process.env.PORT ?? 0);
/**
 * BARE_SPIN_US: CPU to spend on each request before answering (busy-waiting, µs; default 0).
 * A ceiling slowed to a service's cost per request, with none of its code, collections or
 * timers: `npm run bench:tail` compares the service's latency with it (tail-at-cost.ts).
 */
const spinMs = Number(process.env.BARE_SPIN_US ?? 0) / 1000;

// Two handlers, chosen once: the ceiling's own (BARE_SPIN_US unset) is as it always was.
const onRequest =
  spinMs > 0
    ? (res: HttpResponse) => {
        res.onAborted(() => {});
        res.onData((_chunk, isLast) => {
          if (!isLast) return;
          const until = performance.now() + spinMs;
          while (performance.now() < until);
          res.cork(() => {
            res.writeStatus('200 OK').writeHeader('Content-Type', 'application/json').end(body);
          });
        });
      }
    : (res: HttpResponse) => {
        res.onAborted(() => {});
        res.onData((_chunk, isLast) => {
          if (isLast) {
            res.cork(() => {
              res.writeStatus('200 OK').writeHeader('Content-Type', 'application/json').end(body);
            });
          }
        });
      };

uws
  .App()
  .any('/*', onRequest)
  .listen('127.0.0.1', port, (sock) => {
    if (!sock) process.exit(1);
    process.stdout.write(`listening ${uws.us_socket_local_port(sock)}\n`);
  });
