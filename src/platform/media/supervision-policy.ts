import type { Config } from '../config.js';

/** How long a supervisor waits before it starts a failed process again. */
export interface BackoffPolicy {
  /** The wait after the first failure in a row. */
  initialMs: number;
  /** The longest wait, however many failures in a row. */
  maxMs: number;
}

/**
 * The wait before the next start after `failuresInRow` failures in a row: none after none,
 * then `initialMs`, doubling per failure, capped at `maxMs`. The caller resets the count to 0
 * once a run made progress, so a process that worked for a while comes back quickly.
 */
export function restartDelay(failuresInRow: number, policy: BackoffPolicy): number {
  if (failuresInRow <= 0) return 0;
  // The exponent is bounded so the product stays finite however long the failures go on.
  return Math.min(policy.maxMs, policy.initialMs * 2 ** Math.min(failuresInRow - 1, 30));
}

/** What an operator sets once for every supervised media process (PLAYLINE_MEDIA_*). */
export interface RestartSettings {
  backoff: BackoffPolicy;
  /** Time between SIGTERM and SIGKILL when a process is ended (stop, stall). */
  killGraceMs: number;
}

/** The defaults of the settings (1 s doubling to 30 s; 3 s of grace), for callers without a config. */
export const defaultRestartSettings: RestartSettings = { backoff: { initialMs: 1000, maxMs: 30_000 }, killGraceMs: 3000 };

export const restartSettingsOf = (config: Pick<Config, 'mediaRestartBackoffMs' | 'mediaRestartBackoffMaxMs' | 'mediaKillGraceMs'>): RestartSettings => ({
  backoff: { initialMs: config.mediaRestartBackoffMs, maxMs: config.mediaRestartBackoffMaxMs },
  killGraceMs: config.mediaKillGraceMs,
});

/** How one kind of long-running media process is supervised. */
export interface SupervisionPolicy extends RestartSettings {
  /**
   * The stall rule: a run whose output has not advanced for this long is ended (SIGTERM, then
   * SIGKILL after the grace) with the stall as its reason, and started again.
   */
  stallMs: number;
  /**
   * Whether the stall rule applies from the start of a run (a push must get its first frames
   * out within `stallMs`), or only once output first advanced (a listener waits for its source
   * as long as it takes).
   */
  firstProgressDeadline: boolean;
  /**
   * What the end of a run that made progress is: `failure` (a push is meant to run forever: the
   * backoff applies and the reason is kept), or `expected` (a listener whose source left: it is
   * started again at once to listen for the next one).
   */
  endAfterProgress: 'failure' | 'expected';
}
