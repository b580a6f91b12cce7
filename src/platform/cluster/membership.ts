import type { Redis } from 'ioredis';
import type { BackgroundWork } from '../background-work.js';
import type { Clock } from '../clock.js';

export interface ClusterLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface MembershipOptions {
  redis: Redis;
  /** Prefix of the registry keys, e.g. `playline:cluster:`. */
  prefix: string;
  instanceId: string;
  clock: Clock;
  log: ClusterLog;
  /** Heartbeat and housekeeping period. Default 1 s. */
  heartbeatMs?: number;
  /** An instance silent for this long is dead: what it left is taken over. Default 15 s. */
  deadAfterMs?: number;
}

/** An instance in the registry, as its last heartbeat described it. */
export interface Member {
  id: string;
  beatAt: number;
  alive: boolean;
  /** What the modules of that instance report in each heartbeat (see `report`). */
  report: Record<string, number>;
}

/**
 * A cluster-wide chore. With `everyMs`, one instance of the cluster runs it per period (an
 * expiring Redis key elects it); with `due`, each instance runs it whenever `due` says so (the
 * chore itself must then keep a second runner out, as the statistics rebuild does with its flag).
 */
export type Chore = { name: string; run: () => Promise<unknown> } & ({ everyMs: number } | { due: () => Promise<boolean> });

/**
 * Takes over what a dead instance left (idempotently: a takeover that dies halfway is done
 * again by the next one); 'busy' to try again at the next heartbeat. What it returns is logged.
 */
export type TakeOver = (member: Member) => Promise<Record<string, number> | 'busy'>;

/**
 * This instance's part in the cluster: a heartbeat in a Redis registry (with what the modules
 * report, e.g. up to when the statistics counted its batches), taking over what instances that
 * stopped answering left behind, and cluster-wide chores. Modules register their part before
 * `presence` starts; the runtime starts `presence` early and `housekeeping` once the modules
 * run, and stops them in reverse, so no chore runs while a module shuts down and the instance
 * leaves the registry last.
 */
export class Membership {
  private readonly o: MembershipOptions;
  private readonly instancesKey: string;
  private readonly heartbeatMs: number;
  private readonly deadAfterMs: number;
  private readonly reports = new Map<string, () => number>();
  private readonly takeOvers: TakeOver[] = [];
  private readonly choreList: Chore[] = [];
  private readonly holds: (() => boolean)[] = [];
  private readonly memberListeners: ((alive: number) => void)[] = [];
  private cancelTick: (() => void) | undefined;
  private ticking: Promise<void> | undefined;
  private readonly chores = new Map<string, Promise<unknown>>();
  private running = false;

  constructor(options: MembershipOptions) {
    this.o = options;
    this.instancesKey = `${options.prefix}instances`;
    this.heartbeatMs = options.heartbeatMs ?? 1000;
    this.deadAfterMs = options.deadAfterMs ?? 15_000;
  }

  /** Adds `name` (read at every heartbeat) to what this instance tells the others about itself. */
  report(name: string, read: () => number): void {
    this.reports.set(name, read);
  }

  /** Runs `takeOver` for every instance found dead, before it is removed from the registry. */
  onDead(takeOver: TakeOver): void {
    this.takeOvers.push(takeOver);
  }

  chore(chore: Chore): void {
    this.choreList.push(chore);
  }

  /** On stop, the instance stays in the registry while `holding` is true, so a survivor takes over what it holds. */
  stayListedWhile(holding: () => boolean): void {
    this.holds.push(holding);
  }

  /** Told the number of live instances at every heartbeat (e.g. for rate shares). */
  onMembers(listener: (alive: number) => void): void {
    this.memberListeners.push(listener);
  }

  /** Registers the instance at start; at stop leaves the registry (or beats a last time while it holds work). */
  readonly presence: BackgroundWork = {
    name: 'cluster membership',
    start: () => this.beat(),
    stop: async () => {
      if (this.holds.some((holding) => holding())) await this.beat();
      else await this.o.redis.hdel(this.instancesKey, this.o.instanceId);
    },
  };

  /** The heartbeat, the takeovers and the chores, every `heartbeatMs`; stop waits for the chores. */
  readonly housekeeping: BackgroundWork = {
    name: 'cluster housekeeping',
    start: async () => {
      this.running = true;
      this.schedule();
    },
    stop: async () => {
      this.running = false;
      this.cancelTick?.();
      this.cancelTick = undefined;
      await this.ticking;
      await Promise.all(this.chores.values());
    },
  };

  private schedule(): void {
    if (!this.running) return;
    this.cancelTick = this.o.clock.setTimer(() => {
      this.cancelTick = undefined;
      this.ticking = this.tick()
        .catch((err: unknown) => this.o.log.error({ err }, 'cluster housekeeping failed; trying again'))
        .finally(() => {
          this.ticking = undefined;
          this.schedule();
        });
    }, this.heartbeatMs);
  }

  /** One heartbeat plus whatever housekeeping is due (public for tests). */
  async tick(): Promise<void> {
    await this.beat();
    await this.sweepDead();
    for (const chore of this.choreList) {
      if ('everyMs' in chore) {
        if (await this.elected(chore.name, chore.everyMs)) this.runChore(chore);
      } else if (!this.chores.has(chore.name) && (await chore.due())) {
        this.runChore(chore);
      }
    }
  }

  private runChore(chore: Chore): void {
    if (this.chores.has(chore.name)) return;
    const done = chore
      .run()
      .catch((err: unknown) => this.o.log.error({ err, chore: chore.name }, 'cluster chore failed'))
      .finally(() => this.chores.delete(chore.name));
    this.chores.set(chore.name, done);
  }

  /** True for the one instance that claims `chore` for the next `everyMs` (an expiring key). */
  private async elected(chore: string, everyMs: number): Promise<boolean> {
    return (await this.o.redis.set(`${this.o.prefix}due:${chore}`, this.o.instanceId, 'PX', everyMs, 'NX')) === 'OK';
  }

  private async beat(): Promise<void> {
    const beat: Record<string, number> = { beatAt: this.o.clock.now() };
    for (const [name, read] of this.reports) beat[name] = read();
    await this.o.redis.hset(this.instancesKey, this.o.instanceId, JSON.stringify(beat));
  }

  private memberOf(id: string, text: string, now: number): Member {
    const { beatAt, ...report } = JSON.parse(text) as { beatAt: number } & Record<string, number>;
    return { id, beatAt, alive: beatAt + this.deadAfterMs > now, report };
  }

  /** The instances in the registry, alive or not yet swept. */
  async members(): Promise<Member[]> {
    const now = this.o.clock.now();
    return Object.entries(await this.o.redis.hgetall(this.instancesKey))
      .map(([id, text]) => this.memberOf(id, text, now))
      .sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  /** Takes over from the instances silent for `deadAfterMs` and removes them; returns their ids. */
  async sweepDead(): Promise<string[]> {
    const now = this.o.clock.now();
    const swept: string[] = [];
    const registry = Object.entries(await this.o.redis.hgetall(this.instancesKey)).map(([id, text]) => this.memberOf(id, text, now));
    const alive = registry.filter((m) => m.alive).length || 1;
    for (const listener of this.memberListeners) listener(alive);
    for (const member of registry) {
      if (member.id === this.o.instanceId || member.alive) continue;
      const lock = `${this.o.prefix}sweep:${member.id}`;
      if ((await this.o.redis.set(lock, this.o.instanceId, 'PX', 60_000, 'NX')) !== 'OK') continue;
      const taken = await this.takeOver(member);
      if (taken === 'busy') {
        await this.o.redis.del(lock);
        continue;
      }
      await this.o.redis.hdel(this.instancesKey, member.id);
      this.o.log.warn({ instance: member.id, ...taken }, 'instance stopped answering: took over what it left');
      swept.push(member.id);
    }
    return swept;
  }

  private async takeOver(member: Member): Promise<Record<string, number> | 'busy'> {
    const taken: Record<string, number> = {};
    for (const takeOver of this.takeOvers) {
      const result = await takeOver(member);
      if (result === 'busy') return 'busy';
      Object.assign(taken, result);
    }
    return taken;
  }
}
