/**
 * Entry point of the webhook delivery thread (a worker_threads Worker started by
 * delivery-thread.ts). It only sends: every attempt is reported back to the front thread,
 * which persists it, so the store keeps a single writer and stays behind its interface (a
 * shared backend later needs nothing here). Secrets arrive in messages and are never logged.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { DeliveryWorkerOptions, FromWorker, ToWorker } from './protocol.js';
import { DeliveryEngine, undiciSender } from './sender.js';

if (!parentPort) throw new Error('delivery-worker.js must run as a worker thread');
const port = parentPort;
const opts = workerData as DeliveryWorkerOptions;
const http = undiciSender(opts);
const engine = new DeliveryEngine(
  opts,
  (msg: FromWorker) => port.postMessage(msg),
  http.send,
  () => void http.close(),
);
port.on('message', (msg: ToWorker) => engine.handle(msg));
