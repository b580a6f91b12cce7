import type { PlaybackEvent } from '../vod-stats/events.schema.js';

/**
 * What the edge emits: playback events as the statistics ingest takes them, including
 * `workspace_only` refusals (an asset outside the library counts at the workspace level only),
 * `startup_ms` on starts and `rebuffer` reports from CMCD (history only).
 */
export type EdgeEvent = PlaybackEvent;
