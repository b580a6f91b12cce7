import { parentPort, workerData } from 'node:worker_threads';
import { parseCallbackAllowList } from '../../platform/net/callback-allowlist.js';
import { SsrfGuard } from '../../platform/net/ssrf-guard.js';
import { CallbackClient } from './callback-client.js';
import type { CallbackSenderSettings, SenderAnswer, SenderRequest } from './callback-sender.js';
import type { DeliveryOutcome } from './delivery-outcome.js';

/**
 * The callback sender thread (callback-sender.ts): its own `CallbackClient` (keep-alive pools,
 * SSRF guard with DNS pinning, timeouts) sends what the main thread hands over, and the outcomes
 * go back in batches: every answer that arrives in one turn of this thread's event loop travels
 * in one message.
 */
const settings = workerData as CallbackSenderSettings;
const client = new CallbackClient({
  guard: new SsrfGuard({ allowList: parseCallbackAllowList(settings.allowList) }),
  timeoutMs: settings.timeoutMs,
  connectionsPerEndpoint: settings.connectionsPerEndpoint,
});
const port = parentPort;
if (!port) throw new Error('callback-sender.worker runs as a worker thread');

let answers: SenderAnswer[] = [];
const send = (): void => {
  const batch = answers;
  answers = [];
  port.postMessage(batch);
};
const answer = (id: number, outcome: DeliveryOutcome): void => {
  if (answers.length === 0) setImmediate(send);
  answers.push([id, outcome]);
};

port.on('message', (batch: SenderRequest[]) => {
  for (const [id, url, body, headers] of batch) {
    client.deliver(url, { body, headers }).then(
      (outcome) => answer(id, outcome),
      (error: unknown) => answer(id, { outcome: 'reset', status: null, latencyMs: 0, detail: String(error) }),
    );
  }
});
