import type { FastifyReply } from 'fastify';

/**
 * A bound on the request bytes one instance holds at once (event batches, pushed files), taken
 * and given back through leases only: a request takes one lease, grows it as its body arrives,
 * and releases it exactly once, when its answer is sent or its connection is gone
 * (`releaseWithReply`). A lease released cannot grow again, so a chunk still on its way after
 * the answer (a refused chunked body) can never take bytes that nobody gives back.
 */
export class BytesInFlight {
  private inFlight = 0;
  /** Requests or chunks refused for lack of room, for metrics. */
  refused = 0;

  /**
   * @param alwaysAdmitOne admit a request whatever its size when nothing else is in flight, so a
   *   bound below the body limit never locks everyone out.
   */
  constructor(
    readonly maxBytes: number,
    private readonly alwaysAdmitOne = false,
  ) {}

  /** Bytes held by live leases. */
  get bytes(): number {
    return this.inFlight;
  }

  /** A lease on `bytes` (0: nothing yet, grown as the body arrives), or undefined when they do not fit. */
  lease(bytes: number): BytesLease | undefined {
    if (!this.fits(bytes)) return undefined;
    this.inFlight += bytes;
    return new BytesLease(this, bytes);
  }

  /** @internal A lease takes more: false (nothing taken) when it does not fit. */
  take(bytes: number): boolean {
    if (!this.fits(bytes)) return false;
    this.inFlight += bytes;
    return true;
  }

  /** @internal A lease gives back all it held. */
  giveBack(bytes: number): void {
    this.inFlight -= bytes;
  }

  private fits(bytes: number): boolean {
    if (bytes <= 0) return true;
    if (this.inFlight + bytes <= this.maxBytes || (this.alwaysAdmitOne && this.inFlight === 0)) return true;
    this.refused++;
    return false;
  }
}

/** The bytes one request holds of a `BytesInFlight`. */
export class BytesLease {
  private heldBytes: number;
  private released = false;

  constructor(
    private readonly budget: BytesInFlight,
    bytes: number,
  ) {
    this.heldBytes = bytes;
  }

  get held(): number {
    return this.heldBytes;
  }

  /** Holds at least `total` bytes: false (nothing taken) when there is no room, or once released. */
  growTo(total: number): boolean {
    if (this.released) return false;
    const extra = total - this.heldBytes;
    if (extra <= 0) return true;
    if (!this.budget.take(extra)) return false;
    this.heldBytes += extra;
    return true;
  }

  /** Gives back everything held; once (later calls do nothing). */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.budget.giveBack(this.heldBytes);
    this.heldBytes = 0;
  }
}

/** Releases `lease` once the request's answer is sent or its connection is gone, whichever comes first. */
export function releaseWithReply(reply: FastifyReply, lease: BytesLease): void {
  const release = () => lease.release();
  reply.raw.once('close', release);
  reply.raw.once('finish', release);
}
