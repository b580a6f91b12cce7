/**
 * Runs a refresh now and then every `intervalMs` after the previous one finished (never two at
 * once), and pauses while the tab is hidden.
 */
export class Poller {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private running = false;
  private active = false;
  private readonly onVisibility = () => {
    if (this.active && document.visibilityState === 'visible') void this.refreshNow();
  };

  constructor(
    private readonly task: () => Promise<void>,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    if (this.active) return;
    this.active = true;
    document.addEventListener('visibilitychange', this.onVisibility);
    void this.refreshNow();
  }

  stop(): void {
    this.active = false;
    document.removeEventListener('visibilitychange', this.onVisibility);
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  async refreshNow(): Promise<void> {
    if (this.running) return;
    clearTimeout(this.timer);
    this.running = true;
    try {
      await this.task();
    } finally {
      this.running = false;
      if (this.active && document.visibilityState !== 'hidden') this.timer = setTimeout(() => void this.refreshNow(), this.intervalMs);
    }
  }
}
