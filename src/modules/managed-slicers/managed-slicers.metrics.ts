import { Counter, Gauge, type Registry } from 'prom-client';
import { liveStates, type LiveStatus } from './live-slicer-process.js';

/** Slicer process metrics of this instance; returns the hook that counts a restart. */
export function registerSlicerMetrics(registry: Registry, statuses: () => LiveStatus[]): { restarted(): void } {
  new Gauge({
    name: 'playline_slicers_running',
    help: 'Slicer processes this instance supervises, by state',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const counts = new Map<string, number>(liveStates.map((s) => [s, 0]));
      for (const s of statuses()) counts.set(s.state, (counts.get(s.state) ?? 0) + 1);
      for (const [state, n] of counts) this.set({ state }, n);
    },
  });
  new Gauge({
    name: 'playline_slicers_input_bitrate_kbps',
    help: 'Sum of the input bitrates of the live slicers of this instance, in kbit/s',
    registers: [registry],
    collect() {
      this.set(statuses().reduce((sum, s) => sum + (s.inputKbps ?? 0), 0));
    },
  });
  const restarts = new Counter({ name: 'playline_slicer_restarts_total', help: 'Slicer processes started again after they ended (source gone, crash)', registers: [registry] });
  return { restarted: () => restarts.inc() };
}
