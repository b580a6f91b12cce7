import type { TargetCreateBody } from './syndication.schema.js';

/** What publishing one schedule to its target needs. The target carries its secrets in clear. */
export interface PublishJob {
  workspaceId: string;
  scheduleId: string;
  targetId: string;
  target: TargetCreateBody;
  contentId: string;
  contentType: string;
  region: string;
  scte35Enabled: boolean;
  sourceUrlParams: string;
  /** The generated pull URL, for a Custom hls target. */
  pullUrl: string | null;
}

export type PublishOutcome = { ok: true } | { ok: false; reason: string };

/**
 * The port to the media pipeline that actually publishes. `start` resolves once publishing
 * runs (or failed to start: the schedule goes to `error`); failures after that are reported
 * through `ScheduleService.markFailed`.
 */
export interface Publisher {
  start(job: PublishJob): Promise<PublishOutcome>;
  stop(job: PublishJob): Promise<void>;
}

/** The default publisher: no media pipeline, every start succeeds, so the whole flow runs on one machine. */
export const simulatedPublisher: Publisher = {
  start: async () => ({ ok: true }),
  stop: async () => undefined,
};
