/**
 * The ceiling: a bare uWebSockets.js server that reads a POST body and answers a fixed JSON
 * of the same size as a routing decision. Run as a child process by the benchmarks.
 */
import uws from '@trufflesuite/uws-js-unofficial';

const body = process.env.BARE_BODY ?? '{}';
const port = Number(process.env.PORT ?? 0);
uws
  .App()
  .any('/*', (res) => {
    res.onAborted(() => {});
    res.onData((_chunk, isLast) => {
      if (isLast) {
        res.cork(() => {
          res.writeStatus('200 OK').writeHeader('Content-Type', 'application/json').end(body);
        });
      }
    });
  })
  .listen('127.0.0.1', port, (sock) => {
    if (!sock) process.exit(1);
    process.stdout.write(`listening ${uws.us_socket_local_port(sock)}\n`);
  });
