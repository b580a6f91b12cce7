/**
 * The RTMP chunk stream, one direction: reassembles messages from chunks (basic header,
 * message header of type 0-3, extended timestamps, the chunk size the sender set with Set Chunk
 * Size), and writes messages back as chunks with full (type 0) headers, so a rewritten message
 * never depends on what the receiver remembers of the one before.
 */
export interface RtmpMessage {
  chunkStreamId: number;
  timestamp: number;
  typeId: number;
  streamId: number;
  payload: Buffer;
}

export const MSG_SET_CHUNK_SIZE = 1;
export const MSG_ABORT = 2;
export const MSG_ACKNOWLEDGEMENT = 3;
export const MSG_USER_CONTROL = 4;
export const MSG_WINDOW_ACK_SIZE = 5;
export const MSG_SET_PEER_BANDWIDTH = 6;
export const MSG_AUDIO = 8;
export const MSG_VIDEO = 9;
export const MSG_COMMAND_AMF3 = 17;
export const MSG_DATA_AMF0 = 18;
export const MSG_COMMAND_AMF0 = 20;

const EXTENDED = 0xffffff;
const MAX_MESSAGE = 16 * 1024 * 1024;

interface ChunkStreamState {
  timestamp: number;
  /** The timestamp field as last sent: absolute after a type 0 header, a delta otherwise. */
  tsField: number;
  length: number;
  typeId: number;
  streamId: number;
  partial: Buffer[];
  received: number;
}

export class RtmpProtocolError extends Error {}

export class RtmpChunkReader {
  private buffer: Buffer = Buffer.alloc(0);
  private chunkSize = 128;
  private readonly streams = new Map<number, ChunkStreamState>();

  /** Feeds bytes; returns the messages they complete, in order. Throws RtmpProtocolError on a broken stream. */
  push(data: Buffer): RtmpMessage[] {
    this.buffer = this.buffer.length === 0 ? data : Buffer.concat([this.buffer, data]);
    const messages: RtmpMessage[] = [];
    for (;;) {
      const consumed = this.readChunk(messages);
      if (consumed === 0) break;
      this.buffer = this.buffer.subarray(consumed);
    }
    return messages;
  }

  /** Reads one chunk at the start of the buffer; 0 when it is not complete yet. */
  private readChunk(out: RtmpMessage[]): number {
    const b = this.buffer;
    if (b.length < 1) return 0;
    const fmt = (b[0] ?? 0) >> 6;
    let csid = (b[0] ?? 0) & 0x3f;
    let offset = 1;
    if (csid === 0) {
      if (b.length < 2) return 0;
      csid = 64 + (b[1] ?? 0);
      offset = 2;
    } else if (csid === 1) {
      if (b.length < 3) return 0;
      csid = 64 + (b[1] ?? 0) + (b[2] ?? 0) * 256;
      offset = 3;
    }
    const headerSize = [11, 7, 3, 0][fmt] ?? 0;
    if (b.length < offset + headerSize) return 0;
    const previous = this.streams.get(csid);
    if (fmt !== 0 && !previous) throw new RtmpProtocolError(`chunk stream ${csid} starts without a full header`);
    const state: ChunkStreamState = previous ?? { timestamp: 0, tsField: 0, length: 0, typeId: 0, streamId: 0, partial: [], received: 0 };
    const startsMessage = state.received === 0;
    const tsField = fmt === 3 ? state.tsField : b.readUIntBE(offset, 3);
    let length = state.length;
    let typeId = state.typeId;
    let streamId = state.streamId;
    if (fmt <= 1) {
      length = b.readUIntBE(offset + 3, 3);
      typeId = b[offset + 6] ?? 0;
    }
    if (fmt === 0) streamId = b.readUInt32LE(offset + 7);
    offset += headerSize;
    const extended = tsField === EXTENDED;
    let extendedValue = 0;
    if (extended) {
      if (b.length < offset + 4) return 0;
      extendedValue = b.readUInt32BE(offset);
      offset += 4;
    }
    if (length > MAX_MESSAGE) throw new RtmpProtocolError(`message of ${length} bytes exceeds the limit`);
    const remaining = length - (startsMessage ? 0 : state.received);
    const take = Math.min(this.chunkSize, remaining);
    if (b.length < offset + take) return 0;

    if (startsMessage) {
      const field = extended ? extendedValue : tsField;
      // As ffmpeg reads it: a type 0 header is absolute; the others (type 3 too) add a delta.
      state.timestamp = fmt === 0 ? field : state.timestamp + field;
      state.tsField = tsField;
      state.length = length;
      state.typeId = typeId;
      state.streamId = streamId;
      state.partial = [];
    }
    state.partial.push(b.subarray(offset, offset + take));
    state.received += take;
    this.streams.set(csid, state);
    if (state.received >= state.length) {
      const payload = Buffer.concat(state.partial);
      state.partial = [];
      state.received = 0;
      out.push({ chunkStreamId: csid, timestamp: state.timestamp, typeId: state.typeId, streamId: state.streamId, payload });
      if (state.typeId === MSG_SET_CHUNK_SIZE && payload.length >= 4) this.chunkSize = Math.max(1, payload.readUInt32BE(0) & 0x7fffffff);
    }
    return offset + take;
  }
}

export class RtmpChunkWriter {
  private chunkSize = 128;

  /** The chunks of one message; a Set Chunk Size message applies to the messages after it. */
  write(message: RtmpMessage): Buffer {
    const { chunkStreamId: csid, timestamp, typeId, streamId, payload } = message;
    const extended = timestamp >= EXTENDED;
    const basic = (fmt: number): Buffer => {
      if (csid < 64) return Buffer.from([(fmt << 6) | csid]);
      if (csid < 320) return Buffer.from([fmt << 6, csid - 64]);
      return Buffer.from([(fmt << 6) | 1, (csid - 64) & 0xff, (csid - 64) >> 8]);
    };
    const ext = () => {
      const e = Buffer.alloc(4);
      e.writeUInt32BE(timestamp >>> 0);
      return e;
    };
    const header = Buffer.alloc(11);
    header.writeUIntBE(extended ? EXTENDED : timestamp, 0, 3);
    header.writeUIntBE(payload.length, 3, 3);
    header[6] = typeId;
    header.writeUInt32LE(streamId, 7);
    const parts: Buffer[] = [basic(0), header];
    if (extended) parts.push(ext());
    for (let offset = 0; offset < payload.length || offset === 0; offset += this.chunkSize) {
      if (offset > 0) {
        parts.push(basic(3));
        if (extended) parts.push(ext());
      }
      parts.push(payload.subarray(offset, offset + this.chunkSize));
      if (payload.length === 0) break;
    }
    if (typeId === MSG_SET_CHUNK_SIZE && payload.length >= 4) this.chunkSize = Math.max(1, payload.readUInt32BE(0) & 0x7fffffff);
    return Buffer.concat(parts);
  }
}
