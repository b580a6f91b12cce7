import { Counter, Gauge, type Registry } from 'prom-client';
import type { BytesInFlight } from '../../platform/http/bytes-in-flight.js';
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

/** The level of the hls-push bytes-in-flight budget. */
export function registerPushMetrics(registry: Registry, budget: BytesInFlight): void {
  new Gauge({
    name: 'playline_hls_push_bytes_in_flight',
    help: 'Bytes of files pushed to hls slicers being received right now (bounded by PLAYLINE_HLS_PUSH_MAX_BYTES_IN_FLIGHT)',
    registers: [registry],
    collect() {
      this.set(budget.bytes);
    },
  });
}
