import type { Worker } from 'node:worker_threads';
import { startWorker } from '../../platform/worker-thread.js';
import type { CallbackRequest, CallbackTransport } from '../../platform/outbound/delivery-client.js';
import type { DeliveryOutcome } from '../../platform/outbound/delivery-outcome.js';

/** What the sender thread is started with: the settings its own `CallbackClient` and SSRF guard are built from. */
export interface CallbackSenderSettings {
  /** PLAYLINE_OUTBOUND_ALLOWLIST as configured (already checked on the main thread). */
  allowList: string;
  timeoutMs: number;
  connectionsPerEndpoint: number;
}

/** The thread's start data: the settings, and the count of answer messages the main thread has read (an Int32Array over shared memory, slot 0). */
export interface CallbackSenderStart extends CallbackSenderSettings {
  answersRead: SharedArrayBuffer;
}

/** One request handed to the thread: id, URL, body, headers. */
export type SenderRequest = [id: number, url: string, body: string, headers: Record<string, string>];
/** One answer from the thread: the request's id and what the attempt came to. */
export type SenderAnswer = [id: number, outcome: DeliveryOutcome];

export interface ThreadedCallbackSenderOptions extends CallbackSenderSettings {
  /** The thread failed or stopped unexpectedly (its requests in flight ended as resets). Must not throw. */
  onError?: (message: string, error: unknown) => void;
}

const stopped = (detail: string): DeliveryOutcome => ({ outcome: 'reset', status: null, latencyMs: 0, detail });

/**
 * The delivery port backed by a thread of its own: the HTTP requests (pools, SSRF checks, timers,
 * responses) run on a worker thread with its own `CallbackClient`, so delivery neither waits for
 * nor slows the event loop that serves the API and ingest. What stays on the main thread is the
 * dispatcher (queues, rates, pauses, the delivery log) and the signing, so a request is handed
 * over already signed and its outcome comes back to the same bookkeeping as before.
 *
 * Requests handed over in one turn of the event loop travel as one message. Answers come back in
 * batches: the thread sends its next message only once the main thread has read the previous one
 * (a counter in shared memory, with a notification), so an event loop busy with a large request reads every answer
 * that arrived meanwhile as one message. The thread starts with the first delivery. Should it fail or
 * exit, every request it held ends as a `reset` (the dispatcher's usual backoff applies) and the
 * next delivery starts a new one. The thread runs on the system clock and the system's DNS.
 */
export class ThreadedCallbackSender implements CallbackTransport {
  private worker: Worker | undefined;
  private readonly waiting = new Map<number, (outcome: DeliveryOutcome) => void>();
  private outbox: SenderRequest[] = [];
  private flushScheduled = false;
  private nextId = 1;
  private closed = false;

  constructor(private readonly options: ThreadedCallbackSenderOptions) {}

  deliver(url: string, request: CallbackRequest): Promise<DeliveryOutcome> {
    if (this.closed) return Promise.resolve(stopped('the callback sender is closed'));
    const id = this.nextId;
    this.nextId += 1;
    return new Promise<DeliveryOutcome>((resolve) => {
      this.waiting.set(id, resolve);
      this.outbox.push([id, url, request.body, request.headers]);
      if (this.flushScheduled) return;
      this.flushScheduled = true;
      // After the poll phase: every answer message of this turn has been handled, and the
      // requests they freed travel together (a microtask would send one message per answer message).
      setImmediate(this.flush);
    });
  }

  /** Requests handed to the thread and not answered yet. */
  get inFlight(): number {
    return this.waiting.size;
  }

  /** Stops the thread; requests it still held end as resets. */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.outbox = [];
    if (worker) await worker.terminate();
    this.endWaiting('the callback sender closed before an answer');
  }

  private readonly flush = (): void => {
    this.flushScheduled = false;
    const batch = this.outbox;
    this.outbox = [];
    if (batch.length === 0) return;
    const worker = this.worker ?? this.start();
    // Referenced while it holds requests, so their answers arrive; idle, it keeps no process alive.
    worker.ref();
    worker.postMessage(batch);
  };

  private start(): Worker {
    const { allowList, timeoutMs, connectionsPerEndpoint } = this.options;
    const answersRead = new SharedArrayBuffer(4);
    const read = new Int32Array(answersRead);
    const start: CallbackSenderStart = { allowList, timeoutMs, connectionsPerEndpoint, answersRead };
    const worker = startWorker(import.meta.url, 'callback-sender.worker', { workerData: start });
    worker.on('message', (answers: SenderAnswer[]) => {
      // The thread holds further answers while this count lags behind what it sent: a busy event
      // loop reads one message per turn instead of one per answer that came in meanwhile.
      Atomics.add(read, 0, 1);
      Atomics.notify(read, 0);
      for (const [id, outcome] of answers) {
        const resolve = this.waiting.get(id);
        if (!resolve) continue;
        this.waiting.delete(id);
        resolve(outcome);
      }
      if (this.waiting.size === 0 && this.outbox.length === 0) worker.unref();
    });
    worker.on('error', (error) => this.options.onError?.('error-reporting: the callback sender thread failed', error));
    worker.once('exit', (code) => {
      if (this.worker === worker) this.worker = undefined;
      if (this.closed) return;
      // Every request the thread held is lost with it; those not yet handed over start a new thread.
      const held = this.waiting.size - this.outbox.length;
      if (held > 0) this.options.onError?.(`error-reporting: the callback sender thread stopped (exit code ${code}) holding ${held} requests`, undefined);
      this.endWaiting(`the callback sender thread stopped (exit code ${code})`, new Set(this.outbox.map(([id]) => id)));
    });
    this.worker = worker;
    return worker;
  }

  private endWaiting(detail: string, keep: ReadonlySet<number> = new Set()): void {
    for (const [id, resolve] of this.waiting) {
      if (keep.has(id)) continue;
      this.waiting.delete(id);
      resolve(stopped(detail));
    }
  }
}
