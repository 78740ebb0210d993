/**
 * Ends one worker thread of a running server from outside, as a crash of that thread would,
 * with no hook in the service: the server is started with
 * `NODE_OPTIONS=--inspect=127.0.0.1:<port>`, and this attaches to the thread whose script URL
 * ends with `scriptSuffix` through the inspector protocol (NodeWorker domain) and evaluates
 * `process.exit(code)` in it (in a worker thread that ends the thread only). Resolves once the
 * inspector reports the thread gone.
 */
import { WebSocket } from 'undici';

export async function exitWorkerThread(inspectPort: number, scriptSuffix: string, code: number): Promise<void> {
  const targets = (await (await fetch(`http://127.0.0.1:${inspectPort}/json/list`)).json()) as { webSocketDebuggerUrl: string }[];
  const ws = new WebSocket(targets[0].webSocketDebuggerUrl);
  try {
    await new Promise((resolve, reject) => {
      ws.addEventListener('open', resolve);
      ws.addEventListener('error', reject);
    });
    await new Promise<void>((resolve, reject) => {
      let session: string | null = null;
      const timer = setTimeout(() => reject(new Error(`no worker thread running ${scriptSuffix} ended within 10 s`)), 10_000);
      ws.addEventListener('message', (e) => {
        const m = JSON.parse(String(e.data)) as { method?: string; params?: { sessionId: string; workerInfo?: { url: string } } };
        if (m.method === 'NodeWorker.attachedToWorker' && session === null && m.params!.workerInfo!.url.endsWith(scriptSuffix)) {
          session = m.params!.sessionId;
          const evaluate = { id: 1, method: 'Runtime.evaluate', params: { expression: `process.exit(${code})` } };
          ws.send(JSON.stringify({ id: 2, method: 'NodeWorker.sendMessageToWorker', params: { sessionId: session, message: JSON.stringify(evaluate) } }));
        } else if (m.method === 'NodeWorker.detachedFromWorker' && m.params!.sessionId === session) {
          clearTimeout(timer);
          resolve();
        }
      });
      ws.send(JSON.stringify({ id: 1, method: 'NodeWorker.enable', params: { waitForDebuggerOnStart: false } }));
    });
  } finally {
    ws.close();
  }
}
