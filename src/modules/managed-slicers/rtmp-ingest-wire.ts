import type { Socket } from 'node:net';
import { amfString, decodeAmf0, encodeAmf0, type Amf0Value } from '../../platform/media/rtmp/amf0.js';
import {
  MSG_ACKNOWLEDGEMENT,
  MSG_AUDIO,
  MSG_COMMAND_AMF0,
  MSG_COMMAND_AMF3,
  MSG_SET_CHUNK_SIZE,
  MSG_SET_PEER_BANDWIDTH,
  MSG_USER_CONTROL,
  MSG_WINDOW_ACK_SIZE,
  RtmpChunkReader,
  RtmpChunkWriter,
  type RtmpMessage,
} from '../../platform/media/rtmp/rtmp-chunks.js';

/**
 * The server side of one encoder's RTMP connection, shared by the setup phase and the
 * publishing session that takes it over: the chunk reader keeps its per-stream state across
 * the hand-over, and the byte count behind Acknowledgements starts with the handshake.
 */
export class IngestWire {
  readonly reader = new RtmpChunkReader();
  private readonly writer = new RtmpChunkWriter();
  /** Bytes read from the encoder, the handshake included (the sequence number of Acknowledgements). */
  bytesIn = 0;
  private acknowledged = 0;
  /** Until the encoder announces its own window, acknowledge at the size announced to it. */
  private ackWindow = SERVER_WINDOW;

  constructor(readonly socket: Socket) {}

  send(...messages: RtmpMessage[]): void {
    if (this.socket.destroyed) return;
    this.socket.write(Buffer.concat(messages.map((message) => this.writer.write(message))));
  }

  /** Counts bytes read and acknowledges every window of them, as the encoder's window requires. */
  received(bytes: number): void {
    this.bytesIn += bytes;
    if (this.bytesIn - this.acknowledged < this.ackWindow || !this.readsAnswers()) return;
    this.acknowledged = this.bytesIn;
    this.send(control(MSG_ACKNOWLEDGEMENT, u32(this.bytesIn % 0x1_0000_0000)));
  }

  /**
   * Acknowledgements and pongs are skipped while the encoder leaves what it was sent unread:
   * a tiny window or a ping flood must not make the server hold answers.
   */
  private readsAnswers(): boolean {
    return this.socket.writableLength < MAX_UNREAD_ANSWERS;
  }

  /** Handles the protocol control messages both phases answer alike; true when `message` was one. */
  control(message: RtmpMessage): boolean {
    if (message.typeId === MSG_WINDOW_ACK_SIZE) {
      const size = message.payload.length >= 4 ? message.payload.readUInt32BE(0) : 0;
      if (size > 0) this.ackWindow = size;
      return true;
    }
    if (message.typeId === MSG_USER_CONTROL) {
      // A ping request (event 6) is answered with its timestamp (event 7).
      if (message.payload.length >= 6 && message.payload.readUInt16BE(0) === 6 && this.readsAnswers()) {
        this.send(userControl(7, message.payload.readUInt32BE(2)));
      }
      return true;
    }
    // The types below audio are protocol control: chunk size (the reader applies it), abort,
    // acknowledgement, bandwidth; none needs an answer.
    return message.typeId < MSG_AUDIO;
  }
}

const MAX_UNREAD_ANSWERS = 64 * 1024;
/** The acknowledgement window and peer bandwidth announced to encoders (nginx-rtmp's default). */
const SERVER_WINDOW = 5_000_000;
const SERVER_CHUNK_SIZE = 4096;

const u32 = (value: number): Buffer => {
  const buffer = Buffer.alloc(4);
  buffer.writeUInt32BE(value >>> 0);
  return buffer;
};

const control = (typeId: number, payload: Buffer): RtmpMessage => ({ chunkStreamId: 2, timestamp: 0, typeId, streamId: 0, payload });

const userControl = (event: number, value: number): RtmpMessage => {
  const payload = Buffer.alloc(6);
  payload.writeUInt16BE(event, 0);
  payload.writeUInt32BE(value >>> 0, 2);
  return control(MSG_USER_CONTROL, payload);
};

const command = (values: Amf0Value[], streamId = 0): RtmpMessage => ({
  chunkStreamId: streamId === 0 ? 3 : 5,
  timestamp: 0,
  typeId: MSG_COMMAND_AMF0,
  streamId,
  payload: encodeAmf0(values),
});

const num = (value: number): Amf0Value => ({ type: 'number', value });
const obj = (entries: Record<string, string | number>): Amf0Value => ({
  type: 'object',
  value: Object.entries(entries).map(([key, value]): [string, Amf0Value] => [key, typeof value === 'number' ? num(value) : amfString(value)]),
});

/** What a server sends before answering `connect`: window, bandwidth, and a chunk size that spares per-chunk headers. */
export const connectPreamble = (): RtmpMessage[] => [
  control(MSG_WINDOW_ACK_SIZE, u32(SERVER_WINDOW)),
  // Limit type 2 (dynamic), as nginx-rtmp and SRS send it.
  control(MSG_SET_PEER_BANDWIDTH, Buffer.concat([u32(SERVER_WINDOW), Buffer.from([2])])),
  control(MSG_SET_CHUNK_SIZE, u32(SERVER_CHUNK_SIZE)),
];

export const connectResult = (transactionId: number): RtmpMessage =>
  command([
    amfString('_result'),
    num(transactionId),
    obj({ fmsVer: 'FMS/3,0,1,123', capabilities: 31 }),
    obj({ level: 'status', code: 'NetConnection.Connect.Success', description: 'Connection succeeded.', objectEncoding: 0 }),
  ]);

/** `_result` for releaseStream / FCPublish (nothing in it: never the stream name) and createStream (the stream id). */
export const commandResult = (transactionId: number, value?: number): RtmpMessage =>
  command([amfString('_result'), num(transactionId), { type: 'null' }, value === undefined ? { type: 'undefined' } : num(value)]);

/** An `onStatus` on the publishing stream; `description` never carries the stream name. */
export const publishStatus = (streamId: number, level: 'status' | 'error', code: string, description: string): RtmpMessage =>
  command([amfString('onStatus'), num(0), { type: 'null' }, obj({ level, code, description })], streamId);

/** User control Stream Begin, sent before NetStream.Publish.Start as servers do. */
export const streamBegin = (streamId: number): RtmpMessage => userControl(0, streamId);

export interface RtmpCommand {
  name: string;
  transactionId: number;
  /** Every value, the name and transaction id included. */
  values: Amf0Value[];
}

/**
 * A command message read (AMF0, or AMF3's form of it: one zero byte, then AMF0 values);
 * undefined for other messages and for commands that cannot be read.
 */
export function commandOf(message: RtmpMessage): RtmpCommand | undefined {
  if (message.typeId !== MSG_COMMAND_AMF0 && message.typeId !== MSG_COMMAND_AMF3) return undefined;
  let values: Amf0Value[];
  try {
    values = decodeAmf0(message.typeId === MSG_COMMAND_AMF3 ? message.payload.subarray(1) : message.payload);
  } catch {
    return undefined;
  }
  const [name, transactionId] = values;
  if (name?.type !== 'string') return undefined;
  return { name: name.value, transactionId: transactionId?.type === 'number' ? transactionId.value : 0, values };
}

/** FLV header (version 1, audio and video flagged) and PreviousTagSize0. */
export const FLV_HEADER = Buffer.from([0x46, 0x4c, 0x56, 0x01, 0x05, 0x00, 0x00, 0x00, 0x09, 0, 0, 0, 0]);

/** One FLV tag and the PreviousTagSize after it; RTMP media payloads are FLV tag bodies as they are. */
export function flvTag(typeId: number, timestamp: number, payload: Buffer): Buffer {
  const tag = Buffer.allocUnsafe(11 + payload.length + 4);
  const ts = timestamp >>> 0;
  tag[0] = typeId;
  tag.writeUIntBE(payload.length, 1, 3);
  tag.writeUIntBE(ts & 0xffffff, 4, 3);
  tag[7] = ts >>> 24;
  tag.writeUIntBE(0, 8, 3);
  payload.copy(tag, 11);
  tag.writeUInt32BE(11 + payload.length, 11 + payload.length);
  return tag;
}

const SET_DATA_FRAME = Buffer.concat([Buffer.from([0x02, 0x00, 13]), Buffer.from('@setDataFrame')]);

/**
 * A data message as an FLV script tag body: encoders wrap onMetaData in `@setDataFrame` (a
 * command to the server to store it), which an FLV file does not have.
 */
export const scriptData = (payload: Buffer): Buffer =>
  payload.subarray(0, SET_DATA_FRAME.length).equals(SET_DATA_FRAME) ? payload.subarray(SET_DATA_FRAME.length) : payload;
