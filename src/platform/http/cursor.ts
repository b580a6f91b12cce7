import { AppError } from '../errors.js';

/**
 * The opaque `cursor` of a Collection page: the keyset position of the page's last item (e.g.
 * `[created_at, id]`), as base64url JSON. Clients only hand back what a list returned.
 */
export const encodeCursor = (position: readonly (string | number)[]): string => Buffer.from(JSON.stringify(position)).toString('base64url');

/** 400 `validation_failed` on `/cursor`: not a cursor this API returned. */
export const invalidCursor = (): AppError =>
  new AppError('validation_failed', 'Invalid cursor', { errors: [{ path: '/cursor', message: 'is not a cursor this list returned' }] });

/** The position a cursor holds, unchecked (an invalid cursor if it is not base64url JSON). */
export function decodeCursor(cursor: string): unknown {
  try {
    return JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor();
  }
}

/** A `[time, id]` position (time an integer): the keyset of lists ordered by time, then id. */
export function decodeTimeIdCursor(cursor: string): { time: number; id: string } {
  const value = decodeCursor(cursor);
  if (Array.isArray(value) && value.length === 2 && Number.isSafeInteger(value[0]) && typeof value[1] === 'string') {
    return { time: value[0] as number, id: value[1] };
  }
  throw invalidCursor();
}
