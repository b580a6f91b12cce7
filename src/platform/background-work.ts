/** Background work a module runs while the server is up (journals, dispatchers, task runners). */
export interface BackgroundWork {
  name: string;
  start(): Promise<void>;
  /** Finish or abandon cleanly; called in reverse start order on shutdown. */
  stop(): Promise<void>;
}
