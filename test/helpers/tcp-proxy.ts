/**
 * A TCP proxy in the test process, to cut a service off from a server (PostgreSQL, Redis)
 * without touching the shared server: `cut()` closes the listening socket and destroys every
 * connection (the service sees its connections drop and new ones refused), `restore()`
 * listens again on the same port.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

export class TcpProxy {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async start(port = 0): Promise<number> {
    const server = createServer((client) => {
      const upstream = connect(this.targetPort, this.targetHost);
      this.sockets.add(client);
      this.sockets.add(upstream);
      const end = () => {
        client.destroy();
        upstream.destroy();
        this.sockets.delete(client);
        this.sockets.delete(upstream);
      };
      client.on('error', end).on('close', end);
      upstream.on('error', end).on('close', end);
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as { port: number }).port;
    return this.port;
  }

  /** Refuses new connections and drops the open ones. */
  async cut(): Promise<void> {
    const s = this.server;
    this.server = null;
    for (const sock of this.sockets) sock.destroy();
    this.sockets.clear();
    if (s) await new Promise<void>((r) => s.close(() => r()));
  }

  /** Listens again on the same port. */
  async restore(): Promise<void> {
    await this.start(this.port);
  }
}
