/**
 * The AMF0 values RTMP commands carry (`connect`, `publish`, ...): enough to read a command,
 * change some of its values and write it back byte for byte otherwise. Dates and references
 * never appear in the commands the publishing relay rewrites or the ingest front reads; anything it cannot read it
 * forwards untouched (the caller keeps the original bytes).
 */
export type Amf0Value =
  | { type: 'number'; value: number }
  | { type: 'boolean'; value: boolean }
  | { type: 'string'; value: string }
  | { type: 'object'; value: [string, Amf0Value][] }
  | { type: 'ecma-array'; value: [string, Amf0Value][] }
  | { type: 'strict-array'; value: Amf0Value[] }
  | { type: 'null' }
  | { type: 'undefined' };

export class Amf0Error extends Error {}

const MARKER = { number: 0, boolean: 1, string: 2, object: 3, null: 5, undefined: 6, ecmaArray: 8, objectEnd: 9, strictArray: 10, longString: 12 };

/** Every value in `buffer`, in order; throws Amf0Error on a type it does not know or a short buffer. */
export function decodeAmf0(buffer: Buffer): Amf0Value[] {
  const values: Amf0Value[] = [];
  let offset = 0;
  const need = (n: number) => {
    if (offset + n > buffer.length) throw new Amf0Error('AMF0 value cut short');
  };
  const readKey = (): string => {
    need(2);
    const length = buffer.readUInt16BE(offset);
    need(2 + length);
    const text = buffer.toString('utf8', offset + 2, offset + 2 + length);
    offset += 2 + length;
    return text;
  };
  const readProperties = (): [string, Amf0Value][] => {
    const properties: [string, Amf0Value][] = [];
    for (;;) {
      const key = readKey();
      need(1);
      if (key === '' && buffer[offset] === MARKER.objectEnd) {
        offset += 1;
        return properties;
      }
      properties.push([key, readValue()]);
    }
  };
  const readValue = (): Amf0Value => {
    need(1);
    const marker = buffer[offset++] ?? -1;
    switch (marker) {
      case MARKER.number:
        need(8);
        offset += 8;
        return { type: 'number', value: buffer.readDoubleBE(offset - 8) };
      case MARKER.boolean:
        need(1);
        return { type: 'boolean', value: buffer[offset++] !== 0 };
      case MARKER.string:
        return { type: 'string', value: readKey() };
      case MARKER.longString: {
        need(4);
        const length = buffer.readUInt32BE(offset);
        need(4 + length);
        offset += 4 + length;
        return { type: 'string', value: buffer.toString('utf8', offset - length, offset) };
      }
      case MARKER.object:
        return { type: 'object', value: readProperties() };
      case MARKER.ecmaArray:
        need(4);
        offset += 4;
        return { type: 'ecma-array', value: readProperties() };
      case MARKER.strictArray: {
        need(4);
        const count = buffer.readUInt32BE(offset);
        offset += 4;
        const items: Amf0Value[] = [];
        for (let i = 0; i < count; i++) items.push(readValue());
        return { type: 'strict-array', value: items };
      }
      case MARKER.null:
        return { type: 'null' };
      case MARKER.undefined:
        return { type: 'undefined' };
      default:
        throw new Amf0Error(`AMF0 type ${String(marker)} is not supported`);
    }
  };
  while (offset < buffer.length) values.push(readValue());
  return values;
}

export function encodeAmf0(values: readonly Amf0Value[]): Buffer {
  const parts: Buffer[] = [];
  const key = (text: string) => {
    const bytes = Buffer.from(text, 'utf8');
    const length = Buffer.alloc(2);
    length.writeUInt16BE(bytes.length);
    parts.push(length, bytes);
  };
  const properties = (list: [string, Amf0Value][]) => {
    for (const [name, value] of list) {
      key(name);
      write(value);
    }
    parts.push(Buffer.from([0, 0, MARKER.objectEnd]));
  };
  const write = (value: Amf0Value): void => {
    switch (value.type) {
      case 'number': {
        const b = Buffer.alloc(9);
        b[0] = MARKER.number;
        b.writeDoubleBE(value.value, 1);
        parts.push(b);
        return;
      }
      case 'boolean':
        parts.push(Buffer.from([MARKER.boolean, value.value ? 1 : 0]));
        return;
      case 'string': {
        const bytes = Buffer.from(value.value, 'utf8');
        if (bytes.length > 0xffff) {
          const head = Buffer.alloc(5);
          head[0] = MARKER.longString;
          head.writeUInt32BE(bytes.length, 1);
          parts.push(head, bytes);
        } else {
          parts.push(Buffer.from([MARKER.string]));
          key(value.value);
        }
        return;
      }
      case 'object':
        parts.push(Buffer.from([MARKER.object]));
        properties(value.value);
        return;
      case 'ecma-array': {
        const head = Buffer.alloc(5);
        head[0] = MARKER.ecmaArray;
        head.writeUInt32BE(value.value.length, 1);
        parts.push(head);
        properties(value.value);
        return;
      }
      case 'strict-array': {
        const head = Buffer.alloc(5);
        head[0] = MARKER.strictArray;
        head.writeUInt32BE(value.value.length, 1);
        parts.push(head);
        for (const item of value.value) write(item);
        return;
      }
      case 'null':
        parts.push(Buffer.from([MARKER.null]));
        return;
      case 'undefined':
        parts.push(Buffer.from([MARKER.undefined]));
        return;
    }
  };
  for (const value of values) write(value);
  return Buffer.concat(parts);
}

export const amfString = (value: string): Amf0Value => ({ type: 'string', value });
