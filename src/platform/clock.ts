/** Source of the current time. Everything that reads time takes a Clock so tests can drive it. */
export interface Clock {
  /** Unix time in milliseconds. */
  now(): number;
  /** Runs `fn` after `ms` milliseconds of this clock's time; returns a cancel function. */
  setTimer(fn: () => void, ms: number): () => void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
};

interface PendingTimer {
  at: number;
  seq: number;
  fn: () => void;
}

/**
 * A clock that only moves when told to; timers fire in order during `advance`.
 *
 * `followRealTime`: its time also never falls behind the real time passed since it was made, so a
 * process signing on the system clock (the CLI a test spawns) stays within the server's signature
 * tolerance however long a loaded machine takes over the file; timers still fire only in `advance`.
 */
export class FakeClock implements Clock {
  private current: number;
  private timers: PendingTimer[] = [];
  private seq = 0;
  private readonly follow: { realStart: number; start: number } | undefined;

  constructor(startMs = Date.UTC(2026, 10, 21, 10, 0, 0), options: { followRealTime?: boolean } = {}) {
    this.current = startMs;
    this.follow = options.followRealTime ? { realStart: Date.now(), start: startMs } : undefined;
  }

  now(): number {
    if (this.follow) this.current = Math.max(this.current, this.follow.start + (Date.now() - this.follow.realStart));
    return this.current;
  }

  setTimer(fn: () => void, ms: number): () => void {
    const timer: PendingTimer = { at: this.now() + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  }

  /** Moves time forward by `ms`, firing every timer that falls due, in due order. */
  advance(ms: number): void {
    const target = this.now() + ms;
    for (;;) {
      const due = this.timers
        .filter((t) => t.at <= target)
        .sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.current = Math.max(this.current, due.at);
      due.fn();
    }
    this.current = target;
  }

  set(ms: number): void {
    const now = this.now();
    if (ms < now) throw new Error('FakeClock cannot go backwards');
    this.advance(ms - now);
  }

  pendingTimers(): number {
    return this.timers.length;
  }
}
