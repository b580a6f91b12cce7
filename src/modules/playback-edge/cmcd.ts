import type { IncomingHttpHeaders } from 'node:http';
import { decodeCmcd, fromCmcdHeaders } from '@svta/cml-cmcd';

/** What the edge takes from a player's CMCD (CTA-5004) data. */
export interface CmcdSignals {
  /** `sid`: the player's own session id. */
  sid?: string;
  /** `bs`: the buffer ran dry since the previous request (a rebuffering). */
  bufferStarved: boolean;
}

export const NO_CMCD: CmcdSignals = { bufferStarved: false };

const HEADERS = ['cmcd-request', 'cmcd-object', 'cmcd-session', 'cmcd-status'] as const;
/** The CMCD request headers a cross-origin player may send (CORS preflight). */
export const CMCD_REQUEST_HEADERS = ['CMCD-Request', 'CMCD-Object', 'CMCD-Session', 'CMCD-Status'];

const CMCD_PARAM = /^CMCD(?:=|$)/;

/**
 * Splits the `CMCD` query parameter off a raw query. Players append it to every request, the
 * signed playback URL included and after its `sig`, so it is never part of the signed text:
 * the rest of the query is returned exactly as sent, byte for byte.
 */
export function splitCmcdQuery(rawQuery: string): { query: string; cmcd: string | undefined } {
  if (!rawQuery.includes('CMCD')) return { query: rawQuery, cmcd: undefined };
  let cmcd: string | undefined;
  const kept: string[] = [];
  for (const pair of rawQuery.split('&')) {
    if (CMCD_PARAM.test(pair)) cmcd ??= pair.slice(5);
    else kept.push(pair);
  }
  return { query: kept.join('&'), cmcd };
}

const signalsOf = (data: Record<string, unknown>): CmcdSignals => ({
  ...(typeof data.sid === 'string' && data.sid.length > 0 ? { sid: data.sid } : {}),
  bufferStarved: data.bs === true,
});

/**
 * The player's CMCD, from the `CMCD` query parameter (its raw, URL-encoded value) and the
 * `CMCD-*` headers, parsed by `@svta/cml-cmcd`. Malformed CMCD is ignored: it never refuses
 * a playback.
 */
export function cmcdSignals(rawQueryValue: string | undefined, headers: IncomingHttpHeaders): CmcdSignals {
  let data: Record<string, unknown> = {};
  try {
    if (rawQueryValue) data = { ...data, ...decodeCmcd(decodeURIComponent(rawQueryValue.replaceAll('+', ' '))) };
  } catch {
    // unreadable query CMCD: ignored
  }
  if (HEADERS.some((h) => headers[h] !== undefined)) {
    const given: Record<string, string> = {};
    for (const h of HEADERS) {
      const value = headers[h];
      if (typeof value === 'string') given[h] = value;
    }
    try {
      data = { ...data, ...fromCmcdHeaders(given) };
    } catch {
      // unreadable header CMCD: ignored
    }
  }
  return signalsOf(data);
}
