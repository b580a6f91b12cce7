import type { Writable } from 'node:stream';
import type { Clock } from '../../platform/clock.js';
import { MSG_AUDIO, MSG_DATA_AMF0, MSG_VIDEO, type RtmpMessage } from '../../platform/media/rtmp/rtmp-chunks.js';
import { FLV_HEADER, commandOf, flvTag, publishStatus, scriptData, streamBegin, type IngestWire } from './rtmp-ingest-wire.js';

/** Why a publishing session ended. */
export type IngestEndReason =
  /** The encoder unpublished, hung up, or its connection failed. */
  | 'encoder_closed'
  /** Nothing came from the encoder for `maxIdleMs` (a vanished encoder must not hold the slot). */
  | 'encoder_idle'
  /** The consumer did not take what it was given for `maxStallMs`. */
  | 'consumer_stalled'
  /** The consumer held more than `maxBufferedBytes` unread. */
  | 'consumer_overflow'
  /** The consumer's stream failed or closed. */
  | 'consumer_closed'
  /** The encoder sent a chunk stream that cannot be read. */
  | 'protocol_error'
  /** `disconnectPublisher()` or `publisher.disconnect()` (stream key rotation). */
  | 'disconnected'
  /** The front was closed. */
  | 'front_closed';

/** How a session ended: a reason for code, a detail for people. Neither ever contains the stream key. */
export interface IngestSessionEnd {
  reason: IngestEndReason;
  detail: string;
}

/** The encoder that publishes through the front, handed to `onPublisher`. */
export interface IngestPublisher {
  readonly remoteAddress: string;
  /** When the publish was accepted (clock time, ms). */
  readonly startedAt: number;
  /** Bytes read from the encoder's connection, the handshake included. */
  readonly bytesReceived: number;
  /** True while the encoder is paused because the consumer has not taken what it was given. */
  readonly waitingForConsumer: boolean;
  /** Resolves once, when the session ends; never rejects. */
  readonly ended: Promise<IngestSessionEnd>;
  /** Ends the session (the encoder is disconnected, the FLV stream ends). */
  disconnect(detail?: string): void;
}

export interface SessionLimits {
  maxStallMs: number;
  maxBufferedBytes: number;
  maxIdleMs: number;
}

const seconds = (ms: number) => `${ms / 1000} s`;

/**
 * One accepted publisher: the encoder's audio, video and data messages become an FLV byte
 * stream written to the consumer's Writable. The encoder's socket is paused while the consumer
 * has not drained (TCP then slows the encoder down), so what the server holds stays bounded.
 */
export class PublishingSession implements IngestPublisher {
  readonly startedAt: number;
  readonly ended: Promise<IngestSessionEnd>;
  private resolveEnded: (end: IngestSessionEnd) => void = () => undefined;
  private sink: Writable | undefined;
  private finished = false;
  private cancelStall: (() => void) | undefined;
  private cancelIdle: (() => void) | undefined;
  private lastDataAt: number;

  constructor(
    private readonly wire: IngestWire,
    readonly remoteAddress: string,
    private readonly streamId: number,
    private readonly clock: Clock,
    private readonly limits: SessionLimits,
    private readonly onFinish: (end: IngestSessionEnd) => void,
  ) {
    this.startedAt = clock.now();
    this.lastDataAt = this.startedAt;
    this.ended = new Promise((resolve) => (this.resolveEnded = resolve));
  }

  get bytesReceived(): number {
    return this.wire.bytesIn;
  }

  get waitingForConsumer(): boolean {
    return this.cancelStall !== undefined;
  }

  get isFinished(): boolean {
    return this.finished;
  }

  /** Attaches the consumer, tells the encoder to start, and handles what it sent right after `publish`. */
  start(sink: Writable, alreadyReceived: RtmpMessage[]): void {
    this.sink = sink;
    // Stays attached after the end: a consumer that exits while its input is flushed (EPIPE)
    // must not take the process down.
    sink.on('error', (error: NodeJS.ErrnoException) => this.end('consumer_closed', `the consumer's input failed (${error.code ?? 'error'})`));
    sink.once('close', () => this.end('consumer_closed', 'the consumer closed its input'));
    if (this.finished) return void sink.end();
    const socket = this.wire.socket;
    socket.on('data', this.onData);
    socket.on('error', (error: NodeJS.ErrnoException) => this.end('encoder_closed', `the encoder's connection failed (${error.code ?? 'error'})`));
    socket.once('close', () => this.end('encoder_closed', 'the encoder closed the connection'));
    this.deliver(FLV_HEADER);
    this.wire.send(streamBegin(this.streamId), publishStatus(this.streamId, 'status', 'NetStream.Publish.Start', 'Publishing started.'));
    this.armIdle(this.limits.maxIdleMs);
    this.handle(alreadyReceived);
  }

  disconnect(detail = 'the publisher was disconnected'): void {
    this.end('disconnected', detail);
  }

  /** Ends the session once; the socket is closed, the consumer's input ended (or dropped when it stalled). */
  end(reason: IngestEndReason, detail: string): void {
    if (this.finished) return;
    this.finished = true;
    this.cancelStall?.();
    this.cancelStall = undefined;
    this.cancelIdle?.();
    this.wire.socket.off('data', this.onData);
    this.wire.socket.destroy();
    const sink = this.sink;
    if (sink && !sink.destroyed) {
      // A consumer that stopped reading would hold what it was given until it exits: drop it.
      if (reason === 'consumer_stalled' || reason === 'consumer_overflow') sink.destroy();
      else if (!sink.writableEnded) sink.end();
    }
    const end = { reason, detail };
    this.onFinish(end);
    this.resolveEnded(end);
  }

  private readonly onData = (data: Buffer): void => {
    this.lastDataAt = this.clock.now();
    this.wire.received(data.length);
    let messages: RtmpMessage[];
    try {
      messages = this.wire.reader.push(data);
    } catch {
      return this.end('protocol_error', 'the encoder sent an RTMP chunk stream that cannot be read');
    }
    this.handle(messages);
  };

  private handle(messages: RtmpMessage[]): void {
    for (const message of messages) {
      if (this.finished) return;
      const { typeId, timestamp, payload } = message;
      if (typeId === MSG_AUDIO || typeId === MSG_VIDEO) {
        // Empty audio/video messages carry nothing an FLV reader could use.
        if (payload.length > 0) this.deliver(flvTag(typeId, timestamp, payload));
      } else if (typeId === MSG_DATA_AMF0) {
        this.deliver(flvTag(typeId, timestamp, scriptData(payload)));
      } else if (!this.wire.control(message)) {
        const name = commandOf(message)?.name;
        if (name === 'deleteStream' || name === 'closeStream') this.end('encoder_closed', 'the encoder stopped publishing');
      }
    }
  }

  private deliver(bytes: Buffer): void {
    const sink = this.sink;
    if (!sink || this.finished) return;
    if (sink.destroyed || sink.writableEnded) return this.end('consumer_closed', 'the consumer closed its input');
    // One message larger than the cap still passes when nothing is held (a big keyframe).
    if (sink.writableLength > 0 && sink.writableLength + bytes.length > this.limits.maxBufferedBytes) {
      return this.end('consumer_overflow', `the consumer left more than ${Math.round(this.limits.maxBufferedBytes / 1024)} KiB unread`);
    }
    if (sink.write(bytes) || this.cancelStall) return;
    this.wire.socket.pause();
    this.cancelStall = this.clock.setTimer(
      () => this.end('consumer_stalled', `the consumer did not take the stream for ${seconds(this.limits.maxStallMs)}`),
      this.limits.maxStallMs,
    );
    sink.once('drain', this.onDrain);
  }

  private readonly onDrain = (): void => {
    this.cancelStall?.();
    this.cancelStall = undefined;
    if (this.finished) return;
    // The encoder was not read while paused: its silence then was ours.
    this.lastDataAt = this.clock.now();
    this.wire.socket.resume();
  };

  private armIdle(ms: number): void {
    this.cancelIdle = this.clock.setTimer(() => {
      if (this.finished) return;
      if (this.waitingForConsumer) return this.armIdle(this.limits.maxIdleMs);
      const quiet = this.clock.now() - this.lastDataAt;
      if (quiet >= this.limits.maxIdleMs) return this.end('encoder_idle', `nothing came from the encoder for ${seconds(this.limits.maxIdleMs)}`);
      this.armIdle(this.limits.maxIdleMs - quiet);
    }, ms);
  }
}
