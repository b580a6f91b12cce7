import { listenerPortProblem, portsOf, type ListenProtocol, type PortRange } from '../ingest-endpoint.js';

/** A listener port held for one live event: released once, by whoever ends the event. */
export interface PortLease {
  readonly protocol: ListenProtocol;
  readonly port: number;
  /** Gives the port (RIST: both) back to the pool; a second call does nothing. */
  release(): void;
}

/**
 * The ingest ports of this instance (PLAYLINE_SLICER_PORTS). A live event leases its listener's
 * port(s) and releases the lease in one place (its `stop`), so no path of the provisioner frees
 * ports by hand. Leases and probes never hand out the same port twice, even to concurrent tasks.
 */
export class PortPool {
  private readonly reserved = new Set<number>();

  constructor(
    private readonly range: PortRange,
    private readonly bindHost: string,
  ) {}

  /**
   * A free port: the preferred one (the slicer's current port) when free, else (unless
   * `keepPort`) the first free one of the range. Returns the reason when none is free.
   */
  async lease(protocol: ListenProtocol, preferred: number | undefined, keepPort: boolean): Promise<PortLease | string> {
    const { from, to } = this.range;
    const candidates: number[] = [];
    if (preferred !== undefined) candidates.push(preferred);
    if (!keepPort) for (let p = from; p <= to; p++) if (p !== preferred) candidates.push(p);
    let firstProblem: string | undefined;
    for (const port of candidates) {
      const { ports } = portsOf(protocol, port);
      // RIST takes an even port and the odd one after it, both in the range.
      if (protocol === 'rist' && (port % 2 !== 0 || port + 1 > to)) continue;
      if (ports.some((p) => this.reserved.has(p))) continue;
      for (const p of ports) this.reserved.add(p);
      const problem = await listenerPortProblem(protocol, this.bindHost, port);
      if (problem === null) return this.leaseOf(protocol, port, ports);
      for (const p of ports) this.reserved.delete(p);
      firstProblem ??= problem;
    }
    const where = keepPort && preferred !== undefined ? `port ${preferred}` : `PLAYLINE_SLICER_PORTS ${from}-${to}`;
    return `No free ingest port (${where}): ${firstProblem ?? 'every port is taken by other slicers of this instance'}`;
  }

  /** Ports leased now (tests: every lease comes back). */
  get leased(): number {
    return this.reserved.size;
  }

  private leaseOf(protocol: ListenProtocol, port: number, ports: number[]): PortLease {
    let held = true;
    return {
      protocol,
      port,
      release: () => {
        if (!held) return;
        held = false;
        for (const p of ports) this.reserved.delete(p);
      },
    };
  }
}
