import type { CallbackRequest, CallbackTransport } from '../../../platform/outbound/delivery-client.js';
import type { DeliveryOutcome, DeliveryOutcomeKind } from '../../../platform/outbound/delivery-outcome.js';

/** One request the fake transport holds until the test answers it. */
export interface HeldRequest {
  url: string;
  request: CallbackRequest;
  answer(outcome: DeliveryOutcomeKind, status?: number | null): void;
}

/** A transport that sends nothing: every request waits for the test to answer it. */
export class FakeTransport implements CallbackTransport {
  readonly held: HeldRequest[] = [];
  sent = 0;

  deliver(url: string, request: CallbackRequest): Promise<DeliveryOutcome> {
    this.sent += 1;
    return new Promise((resolve) => {
      const held: HeldRequest = {
        url,
        request,
        answer: (outcome, status) => {
          this.held.splice(this.held.indexOf(held), 1);
          const fallback = outcome === 'delivered' ? 200 : outcome === 'non_200' ? 500 : null;
          resolve({ outcome, status: status === undefined ? fallback : status, latencyMs: 3 });
        },
      };
      this.held.push(held);
    });
  }

  /** Answers every held request with the same outcome. */
  answerAll(outcome: DeliveryOutcomeKind, status?: number | null): void {
    for (const held of [...this.held]) held.answer(outcome, status);
  }
}

/** Lets queued microtasks and promise callbacks run (no time passes on any clock). */
export const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
