/**
 * TensorFlow.js backend for training: WASM (its .wasm binaries ship inside the npm package,
 * nothing is fetched at run time), or the plain cpu backend when WASM cannot start.
 */
import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-wasm';

export async function initTf(prefer: 'wasm' | 'cpu' = 'wasm'): Promise<string> {
  if (tf.getBackend() === prefer) return prefer;
  try {
    if (await tf.setBackend(prefer)) {
      await tf.ready();
      return tf.getBackend();
    }
  } catch {
    // fall through to cpu
  }
  await tf.setBackend('cpu');
  await tf.ready();
  return tf.getBackend();
}
