import { createHmac, timingSafeEqual } from 'node:crypto';
import { deflateSync, inflateSync } from 'node:zlib';
import { AppError } from '../errors.js';

/**
 * What a v4 `msg` carries: the workspace, the signing time (Unix seconds) and, when the client
 * passes them that way (the platform's published helper does), request parameters.
 */
export interface V4Credential {
  owner: string;
  timestamp: number;
  /** Every key of msg but `_owner` and `_timestamp`; undefined when there is none. */
  params?: Record<string, unknown>;
}

/** Inflated msg larger than this is refused (a zlib bomb would otherwise cost memory). */
export const MAX_INFLATED_MSG_BYTES = 4096;

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * msg = base64(zlib level 9 (JSON {"_owner","_timestamp"})), as the platform's helpers make it;
 * `params` go next to `_owner` and `_timestamp` (request parameters passed inside msg).
 */
export function encodeMsg(owner: string, timestampSeconds: number, params?: Record<string, unknown>): string {
  const json = JSON.stringify({ _owner: owner, _timestamp: timestampSeconds, ...params });
  return deflateSync(Buffer.from(json, 'utf8'), { level: 9 }).toString('base64');
}

/** sig = lowercase hex HMAC-SHA256 of the msg text, keyed by the API key's UTF-8 bytes. */
export function signatureOf(key: Buffer | string, msg: string): string {
  return createHmac('sha256', key).update(msg, 'utf8').digest('hex');
}

export function signV4(owner: string, key: string, timestampSeconds: number, params?: Record<string, unknown>): { msg: string; sig: string } {
  const msg = encodeMsg(owner, timestampSeconds, params);
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
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new AppError('malformed_msg_json', 'msg must hold a JSON object');
  }
  const { _owner: owner, _timestamp: timestamp, ...params } = parsed as Record<string, unknown>;
  if (typeof owner !== 'string' || owner.length === 0) {
    throw new AppError('malformed_msg_json', 'msg must hold a non-empty string _owner');
  }
  if (typeof timestamp !== 'number' || !Number.isFinite(timestamp)) {
    throw new AppError('malformed_msg_json', 'msg must hold a numeric _timestamp (Unix seconds)');
  }
  return Object.keys(params).length > 0 ? { owner, timestamp, params } : { owner, timestamp };
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
