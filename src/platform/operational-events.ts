/**
 * Operational events a workspace can subscribe webhook endpoints to (issue 30 part 4). The
 * producers (assets, slicers, publishing) emit where a state changes; the webhooks module stores
 * one delivery per matching subscription and sends it with retries.
 */
export const operationalEventTypes = [
  'asset.ready',
  'asset.failed',
  'live.started',
  'live.ended',
  'recording.ready',
  'publishing.active',
  'publishing.error',
] as const;

export type OperationalEventType = (typeof operationalEventTypes)[number];

/** What an event says, beside its type and time: ids and the state that changed (JSON-serializable). */
export type OperationalEventData = Record<string, string | number | boolean | null | readonly string[]>;

/**
 * Where producers hand operational events. `emit` is synchronous and never throws or waits: storing
 * the deliveries happens in the background (a failure is logged and counted, the producer goes on).
 */
export interface OperationalEventSink {
  emit(owner: string, type: OperationalEventType, data: OperationalEventData): void;
}

/** The sink of a module built without webhooks (unit tests): events go nowhere. */
export const noOperationalEvents: OperationalEventSink = { emit: () => undefined };
