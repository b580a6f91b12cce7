import type { Redis } from 'ioredis';

export type ChangeHandler = (payload: string, from: string) => void;

export interface ChangeFeedOptions {
  /** Connection used to publish (any command connection). */
  publisher: Redis;
  /** A connection of its own: once subscribed, Redis lets it do nothing else. */
  subscriber: Redis;
  /** Channel names start with it, e.g. `playline:feed:`. */
  prefix: string;
  /** Names this instance in what it publishes; its own messages are not handed back to it. */
  instanceId: string;
}

/**
 * Tells the other instances that something changed (callback settings, pause state), over Redis
 * pub/sub: delivered within milliseconds to every instance subscribed at that moment. Pub/sub
 * is fire-and-forget, so every consumer also keeps a slower safety net (a periodic re-read of
 * the database) for messages lost while it was disconnected.
 */
export class ChangeFeed {
  private readonly handlers = new Map<string, Set<ChangeHandler>>();
  private readonly o: ChangeFeedOptions;
  private listening = false;

  constructor(options: ChangeFeedOptions) {
    this.o = options;
  }

  private channel(topic: string): string {
    return `${this.o.prefix}${topic}`;
  }

  /** Calls `handler` for every change another instance publishes on `topic`; returns an unsubscribe. */
  async subscribe(topic: string, handler: ChangeHandler): Promise<() => void> {
    if (!this.listening) {
      this.listening = true;
      this.o.subscriber.on('message', (channel: string, message: string) => this.deliver(channel, message));
    }
    let set = this.handlers.get(topic);
    if (set === undefined) {
      set = new Set();
      this.handlers.set(topic, set);
      await this.o.subscriber.subscribe(this.channel(topic));
    }
    set.add(handler);
    return () => {
      set.delete(handler);
    };
  }

  /** Publishes a change; resolves with how many instances (other subscribers) received it. */
  async publish(topic: string, payload: string): Promise<number> {
    return this.o.publisher.publish(this.channel(topic), JSON.stringify([this.o.instanceId, payload]));
  }

  private deliver(channel: string, message: string): void {
    if (!channel.startsWith(this.o.prefix)) return;
    const set = this.handlers.get(channel.slice(this.o.prefix.length));
    if (set === undefined) return;
    let from: string;
    let payload: string;
    try {
      [from, payload] = JSON.parse(message) as [string, string];
    } catch {
      return;
    }
    if (from === this.o.instanceId) return;
    for (const handler of set) {
      try {
        handler(payload, from);
      } catch {
        // A consumer's failure must not stop the others; each logs its own.
      }
    }
  }

  async close(): Promise<void> {
    this.handlers.clear();
    if (this.listening) await this.o.subscriber.unsubscribe().catch(() => undefined);
  }
}
