import { parentPort, workerData } from 'node:worker_threads';
import { parseCallbackAllowList } from '../../platform/net/callback-allowlist.js';
import { createOutbound } from '../../platform/net/outbound.js';
import { CallbackClient } from '../../platform/outbound/delivery-client.js';
import type { CallbackSenderStart, SenderAnswer, SenderRequest } from './callback-sender.js';
import type { DeliveryOutcome } from '../../platform/outbound/delivery-outcome.js';

/**
 * The callback sender thread (callback-sender.ts): its own `CallbackClient` (keep-alive pools,
 * SSRF guard with DNS pinning, timeouts) sends what the main thread hands over, and the outcomes
 * go back in batches: the answers that arrive in one turn of this thread's event loop travel in
 * one message, and while the main thread has not read the previous message yet (it is busy), the
 * answers wait and go together once it has.
 */
const settings = workerData as CallbackSenderStart;
const answersRead = new Int32Array(settings.answersRead);
const client = new CallbackClient({
  // This thread's own outbound layer, from the same allow-list (objects do not cross threads).
  outbound: createOutbound({ allowList: parseCallbackAllowList(settings.allowList) }),
  timeoutMs: settings.timeoutMs,
  connectionsPerEndpoint: settings.connectionsPerEndpoint,
});
const port = parentPort;
if (!port) throw new Error('callback-sender.worker runs as a worker thread');

let answers: SenderAnswer[] = [];
let sent = 0;
let sendScheduled = false;
const send = (): void => {
  sendScheduled = false;
  if (answers.length === 0) return;
  // Both counts wrap at 32 bits alike (the shared one is an Int32Array), so "not equal" is "behind".
  const read = Atomics.load(answersRead, 0);
  if (read !== sent) {
    // Wait for the main thread to read it (it notifies as it counts), then send what gathered meanwhile.
    sendScheduled = true;
    const wait = Atomics.waitAsync(answersRead, 0, read);
    if (wait.async) void wait.value.then(send);
    else setImmediate(send);
    return;
  }
  const batch = answers;
  answers = [];
  sent = (sent + 1) | 0;
  port.postMessage(batch);
};
const answer = (id: number, outcome: DeliveryOutcome): void => {
  answers.push([id, outcome]);
  if (sendScheduled) return;
  sendScheduled = true;
  setImmediate(send);
};

port.on('message', (batch: SenderRequest[]) => {
  for (const [id, url, body, headers] of batch) {
    client.deliver(url, { body, headers }).then(
      (outcome) => answer(id, outcome),
      (error: unknown) => answer(id, { outcome: 'reset', status: null, latencyMs: 0, detail: String(error) }),
    );
  }
});
