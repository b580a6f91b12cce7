import { createHmac, timingSafeEqual } from 'node:crypto';
import { deflateSync, inflateSync } from 'node:zlib';
import { AppError } from '../errors.js';

/** What a v4 `msg` carries: the workspace and the signing time (Unix seconds). */
export interface V4Credential {
  owner: string;
  timestamp: number;
}

/** Inflated msg larger than this is refused (a zlib bomb would otherwise cost memory). */
export const MAX_INFLATED_MSG_BYTES = 4096;

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** msg = base64(zlib level 9 (JSON {"_owner","_timestamp"})), as the platform's helpers make it. */
export function encodeMsg(owner: string, timestampSeconds: number): string {
  const json = JSON.stringify({ _owner: owner, _timestamp: timestampSeconds });
  return deflateSync(Buffer.from(json, 'utf8'), { level: 9 }).toString('base64');
}

/** sig = lowercase hex HMAC-SHA256 of the msg text, keyed by the API key's UTF-8 bytes. */
export function signatureOf(key: Buffer | string, msg: string): string {
  return createHmac('sha256', key).update(msg, 'utf8').digest('hex');
}

export function signV4(owner: string, key: string, timestampSeconds: number): { msg: string; sig: string } {
  const msg = encodeMsg(owner, timestampSeconds);
  return { msg, sig: signatureOf(key, msg) };
}

/** Decodes a msg as received (URL-decoded), refusing anything that is not a v4 credential. */
export function decodeMsg(msg: string, maxInflated = MAX_INFLATED_MSG_BYTES): V4Credential {
  if (!BASE64.test(msg)) throw new AppError('malformed_msg', 'msg is not base64 text');
  let inflated: Buffer;
  try {
    inflated = inflateSync(Buffer.from(msg, 'base64'), { maxOutputLength: maxInflated });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
      throw new AppError('msg_too_large', `msg inflates to more than ${maxInflated} bytes`);
    }
    throw new AppError('malformed_msg', 'msg is not zlib-compressed data');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(inflated.toString('utf8'));
  } catch {
    throw new AppError('malformed_msg_json', 'msg does not inflate to JSON');
  }
  const body = parsed as { _owner?: unknown; _timestamp?: unknown } | null;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new AppError('malformed_msg_json', 'msg must hold a JSON object');
  }
  if (typeof body._owner !== 'string' || body._owner.length === 0) {
    throw new AppError('malformed_msg_json', 'msg must hold a non-empty string _owner');
  }
  if (typeof body._timestamp !== 'number' || !Number.isFinite(body._timestamp)) {
    throw new AppError('malformed_msg_json', 'msg must hold a numeric _timestamp (Unix seconds)');
  }
  return { owner: body._owner, timestamp: body._timestamp };
}

/** Constant-time comparison of two hex signatures. */
export function signaturesEqual(expectedHex: string, givenHex: string): boolean {
  const expected = Buffer.from(expectedHex, 'utf8');
  const given = Buffer.from(givenHex.toLowerCase(), 'utf8');
  if (given.length !== expected.length) {
    timingSafeEqual(expected, expected);
    return false;
  }
  return timingSafeEqual(expected, given);
}
