import type { LiveRendition, LiveWindowState } from './live-window.js';

/**
 * A live window's state as LowLatencyWindow publishes it, for readers' tests: `complete` segments
 * of `parts` parts of 0.5 s from `msn`, then `open` parts of the next (announcing the one after).
 */
export function liveWindowOf(o: { msn: number; complete: number; open: number; parts?: number; name?: string; state?: LiveWindowState['state']; endedAtMs?: number; graceMs?: number }): LiveWindowState {
  const name = o.name ?? 'main';
  const perSegment = o.parts ?? 4;
  const partsOf = (msn: number, n: number) => Array.from({ length: n }, (_, p) => ({ uri: `seg_${name}_${msn}_p${p}.m4s`, duration_s: 0.5, independent: p === 0 }));
  const rendition: LiveRendition = {
    name,
    playlist: `media_${name}.m3u8`,
    codecs: 'avc1.64001f,mp4a.40.2',
    bandwidth: 800_000,
    resolution: { width: 640, height: 360 },
    target_duration_s: 2,
    part_target_s: 0.5,
    media_sequence: o.msn,
    discontinuity_sequence: 0,
    segments: Array.from({ length: o.complete }, (_, i) => ({
      msn: o.msn + i,
      uri: `seg_${name}_${o.msn + i}.m4s`,
      init: `init_${name}.mp4`,
      duration_s: perSegment * 0.5,
      program_date_time_ms: Date.UTC(2026, 10, 28, 4, 0, 0) + i * perSegment * 500,
      discontinuity: false,
      parts: partsOf(o.msn + i, perSegment),
    })),
  };
  const state = o.state ?? 'live';
  if (state === 'live') {
    const msn = o.msn + o.complete;
    rendition.open = { msn, init: `init_${name}.mp4`, program_date_time_ms: Date.UTC(2026, 10, 28, 4, 0, 0) + o.complete * perSegment * 500, discontinuity: false, parts: partsOf(msn, o.open) };
    rendition.preload_hint = `seg_${name}_${msn}_p${o.open}.m4s`;
  } else for (const s of rendition.segments) s.parts = [];
  return {
    version: 1,
    state,
    ...(o.endedAtMs !== undefined ? { ended_at_ms: o.endedAtMs } : {}),
    grace_ms: o.graceMs ?? 0,
    index: 'index.m3u8',
    renditions: [rendition],
  };
}
