/**
 * Many POSTs at once, for tests that need a server full of state made through its API (tens of
 * thousands of outcomes): `fetch` costs the test process ~0.5-1 ms of CPU a request, on the
 * two cores it shares with the server, so 40,000 outcomes took ~35 s of a test file's set-up.
 * Here a few keep-alive connections each carry a batch of requests written at once (HTTP/1.1
 * pipelining: uWS answers them in order), and the answers are read by their Content-Length.
 */
import { connect, type Socket } from 'node:net';

export interface PipelineOptions {
  connections?: number;
  /** Requests written at once on a connection before its answers are awaited. */
  depth?: number;
  headers?: Record<string, string>;
}

/** POSTs every body (as JSON) to `path`; resolves with each answer's status, in the bodies' order. */
export async function pipelinedPosts(baseUrl: string, path: string, bodies: readonly unknown[], opts: PipelineOptions = {}): Promise<number[]> {
  const { hostname, port } = new URL(baseUrl);
  const extra = Object.entries(opts.headers ?? {})
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  const requestBytes = (body: unknown): Buffer => {
    const json = Buffer.from(JSON.stringify(body), 'utf8');
    const head = `POST ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\n${extra}Content-Length: ${json.length}\r\n\r\n`;
    return Buffer.concat([Buffer.from(head, 'latin1'), json]);
  };
  const statuses = new Array<number>(bodies.length);
  const depth = opts.depth ?? 32;
  let next = 0;
  const connection = async (): Promise<void> => {
    const socket = connect(Number(port), hostname);
    socket.setNoDelay(true);
    try {
      await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
      const answers = new AnswerReader(socket);
      while (next < bodies.length) {
        const first = next;
        const count = Math.min(depth, bodies.length - first);
        next += count;
        socket.write(Buffer.concat(bodies.slice(first, first + count).map(requestBytes)));
        for (let i = 0; i < count; i++) statuses[first + i] = await answers.next();
      }
    } finally {
      socket.destroy();
    }
  };
  await Promise.all(Array.from({ length: opts.connections ?? 4 }, connection));
  return statuses;
}

/** Reads HTTP/1.1 answers off a socket one at a time: the status of each, its body skipped. */
class AnswerReader {
  private buffered: Buffer = Buffer.alloc(0);
  private waiting: (() => void) | null = null;
  private failure: Error | null = null;

  constructor(socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
      this.wake();
    });
    socket.on('error', (e) => this.fail(e));
    socket.on('close', () => this.fail(new Error('connection closed before every answer arrived')));
  }

  async next(): Promise<number> {
    for (;;) {
      const headEnd = this.buffered.indexOf('\r\n\r\n');
      if (headEnd >= 0) {
        const head = this.buffered.subarray(0, headEnd).toString('latin1');
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        const end = headEnd + 4 + length;
        if (this.buffered.length >= end) {
          this.buffered = this.buffered.subarray(end);
          return Number(head.slice(9, 12));
        }
      }
      if (this.failure) throw this.failure;
      await new Promise<void>((resolve) => (this.waiting = resolve));
    }
  }

  private wake(): void {
    const w = this.waiting;
    this.waiting = null;
    w?.();
  }

  private fail(e: Error): void {
    this.failure ??= e;
    this.wake();
  }
}
