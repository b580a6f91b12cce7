import { ConfigError } from './config.js';

/**
 * The root's wiring, written down as it is made: for each module, which implementation each of
 * its production ports got ("webhooks", "redis", "memory"...). The runtime exposes it, so one
 * test can assert the whole table per mode, and checks it before anything starts: a production
 * port left unwired (undefined) stops the server with an error naming it, instead of a module
 * that quietly drops its events (Immich's start-up check of job handlers is the model).
 */
export type WiringDescription = Record<string, Record<string, string>>;

/** A production port the root did not wire: the server refuses to start. */
export class UnwiredPortError extends ConfigError {
  constructor(readonly ports: readonly string[]) {
    super(`refusing to start: production port${ports.length === 1 ? '' : 's'} not wired: ${ports.join(', ')} (a wiring defect in src/runtime.ts, not a setting)`);
    this.name = 'UnwiredPortError';
  }
}

export class Wiring {
  readonly #table: WiringDescription = {};
  readonly #unwired: string[] = [];

  /**
   * Records that `module`'s `port` gets `value`, described as `to`, and hands the value back for
   * the module's deps. An undefined or null value is recorded as unwired; `check()` refuses it.
   */
  port<T>(module: string, port: string, value: T | undefined | null, to: string): T {
    const row = (this.#table[module] ??= {});
    if (value === undefined || value === null) {
      row[port] = 'UNWIRED';
      this.#unwired.push(`${module}.${port}`);
      return value as T; // never used: check() throws before the runtime is handed out
    }
    row[port] = to;
    return value;
  }

  /** Throws UnwiredPortError naming every production port left unwired. */
  check(): void {
    if (this.#unwired.length > 0) throw new UnwiredPortError(this.#unwired);
  }

  /** The table, modules and ports sorted, for the runtime's `wiring` and the wiring test. */
  describe(): WiringDescription {
    const sorted: WiringDescription = {};
    for (const module of Object.keys(this.#table).sort()) {
      const row = this.#table[module] ?? {};
      sorted[module] = Object.fromEntries(Object.keys(row).sort().map((port) => [port, row[port] ?? '']));
    }
    return sorted;
  }
}
