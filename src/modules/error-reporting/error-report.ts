import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';

/** The body POSTed to a workspace's callback URL (spec "Events", payload fields). */
export const ErrorReportSchema = Type.Object(
  {
    owner: Type.String({ description: 'Workspace ID for which the error is reported' }),
    subtype: Type.Literal('web', { description: 'System component where the error occurred' }),
    url: Type.String({ description: 'Playback URL that triggered the error' }),
    ip: Type.String({ description: 'Client IP address that made the request' }),
    code: Type.Integer({ description: 'HTTP response status of the failed playback request, e.g. 404' }),
    ua: Type.String({ description: 'User-Agent header of the client request' }),
    msg: Type.String({ description: 'Short description of the error cause' }),
    timestamp: Type.Integer({ description: 'Unix time in seconds at which the error occurred' }),
    // Added to the platform's payload (DESIGN §4 keeps its fields): `code` alone cannot tell an invalid signature (110) from an IP mismatch (111), both 403.
    error_code: Type.Integer({ description: 'Playback error code of the failure (100-130; 999 when none applies), e.g. 110 for an invalid token signature' }),
  },
  { additionalProperties: false },
);

export type ErrorReport = Static<typeof ErrorReportSchema>;

/** Error code of a report whose producer gave none (the playback edge's "unknown"). */
export const UNKNOWN_ERROR_CODE = 999;

/** What producers submit: the report fields (`subtype` is implied; `errorCode` becomes `error_code`); extra fields are ignored. */
export type ErrorReportInput = Omit<ErrorReport, 'subtype' | 'error_code'> & { errorCode?: number };

/** Field length caps applied when a report is queued, so a queued report has a bounded size. */
export const reportFieldLimits = { owner: 128, url: 4096, ip: 64, ua: 1024, msg: 1024 } as const;

const cap = (value: string, max: number): string => (value.length > max ? value.slice(0, max) : value);

/** The report as sent: exactly the payload fields, each text field cut to its cap. */
export const boundedReport = (report: ErrorReportInput): ErrorReport => ({
  owner: cap(report.owner, reportFieldLimits.owner),
  subtype: 'web',
  url: cap(report.url, reportFieldLimits.url),
  ip: cap(report.ip, reportFieldLimits.ip),
  code: report.code,
  ua: cap(report.ua, reportFieldLimits.ua),
  msg: cap(report.msg, reportFieldLimits.msg),
  timestamp: report.timestamp,
  error_code: report.errorCode ?? UNKNOWN_ERROR_CODE,
});

/** The report sent by the settings test (test-before-save and POST /error-reporting/test). */
export const sampleReport = (owner: string, nowMs: number): ErrorReport => ({
  owner,
  subtype: 'web',
  url: 'https://playline.invalid/play/00000000000000000000000000000000.m3u8?test=1',
  ip: '203.0.113.10',
  code: 403,
  ua: 'Playline-Callback-Test/1',
  msg: 'Test report: this is what a playback error report looks like',
  timestamp: Math.floor(nowMs / 1000),
  error_code: 110,
});
