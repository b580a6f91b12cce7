import type { Clock } from '../../platform/clock.js';

export interface ResendLimitSettings {
  /** Resends one workspace may make per window (PLAYLINE_WEBHOOK_RESEND_LIMIT). */
  perWindow: number;
  windowMs: number;
  /** Resends of one workspace in flight at once (each is an outbound request of up to the attempt timeout). */
  inFlight: number;
}

/** Workspaces remembered at most; past it the oldest window is forgotten (it would have ended anyway soon). */
const MAX_WORKSPACES = 100_000;

/**
 * Resends per workspace on this instance: at most `perWindow` in a fixed window from the first
 * one counted, and `inFlight` at once. Without it one API key turned resend into an outbound
 * request amplifier (issue 35): every call is an HTTP request to the subscription's endpoint.
 */
export class ResendLimit {
  private readonly windows = new Map<string, { startedAt: number; count: number; running: number }>();

  constructor(private readonly clock: Clock, private readonly settings: ResendLimitSettings) {}

  /** Takes a resend for `owner`: a release function, or the seconds to wait before the next one may go. */
  take(owner: string): { release: () => void } | { retryAfterS: number } {
    const now = this.clock.now();
    let w = this.windows.get(owner);
    if (!w || now - w.startedAt >= this.settings.windowMs) {
      const running = w?.running ?? 0;
      this.windows.delete(owner);
      if (this.windows.size >= MAX_WORKSPACES) {
        const oldest = this.windows.keys().next().value;
        if (oldest !== undefined) this.windows.delete(oldest);
      }
      w = { startedAt: now, count: 0, running };
      this.windows.set(owner, w);
    }
    if (w.running >= this.settings.inFlight) return { retryAfterS: 1 };
    if (w.count >= this.settings.perWindow) return { retryAfterS: Math.max(1, Math.ceil((w.startedAt + this.settings.windowMs - now) / 1000)) };
    w.count++;
    w.running++;
    const window = w;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        window.running--;
      },
    };
  }
}
