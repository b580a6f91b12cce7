import { Type, type Static } from '@sinclair/typebox';
import { AppError, errorCatalogue, type ErrorCode, type FieldViolation } from '../errors.js';
import { isStorageFull } from '../db/storage-full.js';

/** The body of every error answer (RFC 9457 problem details plus a stable `code`). */
export const ProblemSchema = Type.Object(
  {
    type: Type.String({ description: 'URI naming the problem kind: urn:playline:problem:<code>' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String({ description: 'Stable snake_case identifier from the error catalogue' }),
    request_id: Type.String(),
    errors: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
  },
  { $id: 'Problem', additionalProperties: true },
);
export type Problem = Static<typeof ProblemSchema>;

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

const ProblemRef = Type.Ref(ProblemSchema);
interface ProblemResponse {
  description: string;
  content: { 'application/problem+json': { schema: typeof ProblemRef } };
}

/** The catalogue codes a status may carry, for the description of each documented error answer. */
const codesOf = (status: number): string =>
  Object.entries(errorCatalogue)
    .filter(([, entry]) => entry.status === status)
    .map(([code]) => code)
    .join(', ');

/**
 * The error answers a route may give, for its response schema (and so the OpenAPI document).
 * Declared with their content type, so the document says `application/problem+json`, as sent.
 */
export const problemResponses = (...statuses: number[]): Record<number, ProblemResponse> =>
  Object.fromEntries(
    statuses.map((s) => [s, { description: `Problem details; code is one of: ${codesOf(s) || 'see the catalogue'}`, content: { [PROBLEM_CONTENT_TYPE]: { schema: ProblemRef } } }]),
  ) as Record<number, ProblemResponse>;

interface FastifyLikeError {
  code?: string;
  statusCode?: number;
  message?: string;
  validation?: { instancePath?: string; message?: string; params?: Record<string, unknown> }[];
  validationContext?: string;
}

/** A problem body for a catalogue code. */
export const problemOf = (code: ErrorCode, detail: string, requestId: string, errors?: FieldViolation[], extra?: Record<string, unknown>): Problem => {
  const entry = errorCatalogue[code];
  return {
    type: `urn:playline:problem:${code}`,
    title: entry.title,
    status: entry.status,
    detail,
    code,
    request_id: requestId,
    ...(errors && errors.length > 0 ? { errors } : {}),
    ...extra,
  };
};

const validationPath = (context: string | undefined, instancePath: string, params?: Record<string, unknown>) => {
  const missing = typeof params?.missingProperty === 'string' ? `/${params.missingProperty}` : '';
  const extra = typeof params?.additionalProperty === 'string' ? `/${params.additionalProperty}` : '';
  const path = `${instancePath}${missing}${extra}` || '/';
  return context && context !== 'body' ? `/${context}${path === '/' ? '' : path}` : path;
};

/** Fastify's own errors, by code: each gets a catalogue code and a detail that never quotes the URL. */
const frameworkProblems: Record<string, [ErrorCode, string]> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: ['unsupported_media_type', 'Unsupported content type: send application/json'],
  FST_ERR_CTP_INVALID_TYPE: ['unsupported_media_type', 'The Content-Type header is not valid'],
  FST_ERR_CTP_EMPTY_TYPE: ['unsupported_media_type', 'The Content-Type header is empty'],
  FST_ERR_CTP_BODY_TOO_LARGE: ['payload_too_large', 'Request body is larger than this endpoint accepts'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['bad_content_length', 'The body is not as long as its Content-Length header says'],
  FST_ERR_CTP_EMPTY_JSON_BODY: ['malformed_json', 'Body is empty but Content-Type is application/json'],
  FST_ERR_CTP_INVALID_JSON_BODY: ['malformed_json', 'Body is not valid JSON'],
  FST_ERR_BAD_URL: ['bad_url', 'The URL path is not validly percent-encoded'],
  FST_ERR_INVALID_URL: ['bad_url', 'The URL is not valid'],
  FST_ERR_MAX_PARAM_LENGTH: ['uri_too_long', 'A path segment is longer than the longest id this API accepts'],
  FST_ERR_HANDLER_TIMEOUT: ['service_unavailable', 'The request took too long to handle'],
};

/** A 4xx that no rule above names still gets a precise code for its status, never a guess about JSON. */
const byStatus: Partial<Record<number, ErrorCode>> = {
  400: 'bad_request',
  404: 'not_found',
  408: 'request_timeout',
  409: 'conflict',
  413: 'payload_too_large',
  414: 'uri_too_long',
  415: 'unsupported_media_type',
  422: 'unprocessable',
  429: 'throttled',
  431: 'headers_too_large',
  503: 'service_unavailable',
};

/** Maps anything thrown in a request to a problem; unknown errors become a 500 that leaks nothing. */
export function toProblem(err: unknown, requestId: string): Problem {
  // A write that failed for lack of space, even when a service wrapped it in an error of its own.
  if (!(err instanceof AppError && err.status < 500) && isStorageFull(err)) {
    return problemOf('storage_full', 'Storage is full: the write was not made; retry once space is freed', requestId);
  }
  if (err instanceof AppError) return problemOf(err.code, err.detail, requestId, err.errors, err.extra);
  const e = (err ?? {}) as FastifyLikeError;
  if (e.validation) {
    const errors = e.validation.map((v) => ({
      path: validationPath(e.validationContext, v.instancePath ?? '', v.params),
      message: v.message ?? 'is invalid',
    }));
    return problemOf('validation_failed', `Invalid ${e.validationContext ?? 'request'}: ${errors.map((x) => `${x.path} ${x.message}`).join('; ')}`, requestId, errors);
  }
  const known = e.code === undefined ? undefined : frameworkProblems[e.code];
  if (known) return problemOf(known[0], known[1], requestId);
  // The JSON parser's own refusals (e.g. a __proto__ key) are SyntaxErrors carrying a 400.
  if (err instanceof SyntaxError && e.statusCode === 400) return problemOf('malformed_json', 'Body is not valid JSON', requestId);
  const status = e.statusCode;
  if (status !== undefined && status >= 400 && status < 600) {
    const code = byStatus[status] ?? (status < 500 ? 'bad_request' : undefined);
    if (code) return problemOf(code, errorCatalogue[code].title, requestId);
  }
  return problemOf('internal_error', 'An internal error occurred; quote the request_id when reporting it', requestId);
}
