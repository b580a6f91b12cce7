import { timingSafeEqual } from 'node:crypto';
import { Counter, type Registry } from 'prom-client';
import type { Clock } from '../../../platform/clock.js';

/** Every way media comes in: a new protocol is a new member here, admitted by the same policy. */
export type AdmissionProtocol = 'srt' | 'rtmp' | 'rist' | 'hls';

/** Why an encoder was refused (the metric's `reason` label). */
export type AdmissionRefusal =
  /** The presented key is not the live event's, or it names no live event run here. */
  | 'bad_key'
  /** The address failed within the failure pause: refused without looking at its key. */
  | 'paused';

export type AdmissionVerdict = { admitted: true } | { admitted: false; reason: AdmissionRefusal };

export interface AdmissionRequest {
  protocol: AdmissionProtocol;
  slicerId: string;
  /** The workspace the request names (hls push URLs do); undefined where the port names the slicer. */
  owner?: string;
  /** The key as the encoder presented it (RTMP stream name, hls push token; SRT/RIST: see `refused`). */
  presentedKey: string;
  remoteAddress: string;
}

export interface IngestAdmissionOptions {
  clock: Clock;
  /** After a refusal, how long everything from the same address is refused (PLAYLINE_INGEST_FAILURE_PAUSE_MS); 0: no pause. */
  pauseMs: number;
  /** Where the refusal metric is registered (none in tests that do not look at it). */
  registry?: Registry;
  log: { warn(obj: object, msg: string): void };
}

/** Addresses remembered in the failure pause at most: a flood of spoofed sources cannot grow the map without bound. */
const MAX_PAUSED_ADDRESSES = 10_000;

/** Constant-time comparison of a presented key with the live event's. */
const sameKey = (given: string, key: string): boolean => {
  const a = Buffer.from(given);
  const b = Buffer.from(key);
  return a.length === b.length && timingSafeEqual(a, b);
};

/**
 * Who may publish to which live event, for every ingest protocol (mediamtx's auth manager is the
 * anchor): `(protocol, slicer, presented key, remote address) → verdict`. One policy: the key is
 * compared in constant time; an address that presented a wrong key (or named a live event that
 * does not run here) is refused everything for `pauseMs` on the clock, which turns guessing into
 * one try per pause; each refusal is counted in `playline_ingest_refusals_total{protocol,reason}`
 * and logged once per pause of its address. SRT and RIST hand the key to ffmpeg's listener
 * (ffmpeg decrypts): they take the key material from `keyOf` and report what their listener
 * refused through `refused`.
 */
export class IngestAdmission {
  private readonly keys = new Map<string, { owner: string; key: string }>();
  /** Clock ms each address's failure pause ends. */
  private readonly pausedUntil = new Map<string, number>();
  private readonly refusals: Counter<'protocol' | 'reason'> | undefined;

  constructor(private readonly options: IngestAdmissionOptions) {
    this.refusals = options.registry
      ? new Counter({ name: 'playline_ingest_refusals_total', help: 'Encoders refused at ingest admission (wrong stream key, or within the failure pause of their address), by protocol and reason', labelNames: ['protocol', 'reason'], registers: [options.registry] })
      : undefined;
  }

  /** A live event starting here takes encoders with its key until the returned function withdraws it. */
  enroll(slicerId: string, owner: string, key: string): () => void {
    const entry = { owner, key };
    this.keys.set(slicerId, entry);
    return () => {
      if (this.keys.get(slicerId) === entry) this.keys.delete(slicerId);
    };
  }

  /** The key material of a live event run here (SRT passphrase, RIST secret), for the listener ffmpeg runs. */
  keyOf(slicerId: string): string | undefined {
    return this.keys.get(slicerId)?.key;
  }

  /** The verdict on an encoder presenting a key; a refusal is counted, logged and starts its address's pause. */
  admit(request: AdmissionRequest): AdmissionVerdict {
    const now = this.options.clock.now();
    const until = this.pausedUntil.get(request.remoteAddress);
    if (until !== undefined && now < until) {
      this.count(request.protocol, 'paused');
      return { admitted: false, reason: 'paused' };
    }
    const entry = this.keys.get(request.slicerId);
    const expected = entry !== undefined && (request.owner === undefined || request.owner === entry.owner) ? entry.key : undefined;
    // The comparison runs for an unknown slicer too (against the presented key itself), so timing tells nothing.
    const matches = sameKey(request.presentedKey, expected ?? request.presentedKey) && expected !== undefined && request.presentedKey !== '';
    if (matches) {
      this.pausedUntil.delete(request.remoteAddress);
      return { admitted: true };
    }
    this.refused(request.protocol, request.slicerId, request.remoteAddress);
    return { admitted: false, reason: 'bad_key' };
  }

  /** A wrong key seen by a listener that checks keys itself (ffmpeg's SRT/RIST, the RIST front): counted, logged and paused alike. */
  refused(protocol: AdmissionProtocol, slicerId: string, remoteAddress: string): void {
    this.count(protocol, 'bad_key');
    if (this.options.pauseMs > 0) {
      if (this.pausedUntil.size >= MAX_PAUSED_ADDRESSES) this.forgetEnded();
      // Still full: the oldest pause goes first (a Map keeps insertion order).
      if (this.pausedUntil.size >= MAX_PAUSED_ADDRESSES) this.pausedUntil.delete(this.pausedUntil.keys().next().value as string);
      this.pausedUntil.delete(remoteAddress);
      this.pausedUntil.set(remoteAddress, this.options.clock.now() + this.options.pauseMs);
    }
    this.options.log.warn({ protocol, slicerId, remoteAddress, pauseMs: this.options.pauseMs }, 'ingest refused: the stream key was not accepted');
  }

  private count(protocol: AdmissionProtocol, reason: AdmissionRefusal): void {
    this.refusals?.inc({ protocol, reason });
  }

  private forgetEnded(): void {
    const now = this.options.clock.now();
    for (const [address, until] of this.pausedUntil) if (until <= now) this.pausedUntil.delete(address);
  }
}
