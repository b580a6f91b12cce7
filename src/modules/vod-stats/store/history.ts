import { Q } from './bucket-series.js';
import type { BucketSeries } from './bucket-series.js';
import type { HistoryPoint } from './stats-store.js';
import { MINUTE_MS } from '../stats-window.js';

/**
 * The per-minute points of a history series (and its playback-quality series) for the minutes in
 * [first, last] that hold anything, ascending. Each point's counters are summed the way windows
 * are, so both stores give the same numbers.
 */
export const historyPoints = (history: BucketSeries, qoe: BucketSeries | null, first: number, last: number): HistoryPoint[] => {
  const minutes = new Set<number>();
  for (let i = 0; i < history.length; i++) minutes.add(history.timeAt(i));
  if (qoe !== null) for (let i = 0; i < qoe.length; i++) minutes.add(qoe.timeAt(i));
  const points: HistoryPoint[] = [];
  for (const minute of [...minutes].sort((a, b) => a - b)) {
    if (minute < first || minute > last) continue;
    const point: HistoryPoint = { ts: minute * MINUTE_MS, stats: history.sum(minute, minute), rebuffers: 0, startup: { count: 0, sum: 0, max: 0 } };
    if (qoe !== null) {
      for (let at = 0; at < qoe.cells.length; at += qoe.stride) {
        if (qoe.cells[at] !== minute) continue;
        point.rebuffers = qoe.cells[at + Q.rebuffers] as number;
        point.startup = { sum: qoe.cells[at + Q.startupSum] as number, count: qoe.cells[at + Q.startupCount] as number, max: qoe.cells[at + Q.startupMax] as number };
      }
    }
    points.push(point);
  }
  return points;
};
