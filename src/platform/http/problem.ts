import { Type, type Static } from '@sinclair/typebox';
import { AppError, errorCatalogue, type ErrorCode, type FieldViolation } from '../errors.js';

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

/** The error answers a route may give, for its response schema (and so the OpenAPI document). */
export const problemResponses = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((s) => [s, Type.Ref(ProblemSchema)])) as Record<number, ReturnType<typeof Type.Ref>>;

interface FastifyLikeError {
  code?: string;
  statusCode?: number;
  message?: string;
  validation?: { instancePath?: string; message?: string; params?: Record<string, unknown> }[];
  validationContext?: string;
}

const problemOf = (code: ErrorCode, detail: string, requestId: string, errors?: FieldViolation[], extra?: Record<string, unknown>): Problem => {
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

/** Maps anything thrown in a request to a problem; unknown errors become a 500 that leaks nothing. */
export function toProblem(err: unknown, requestId: string): Problem {
  if (err instanceof AppError) return problemOf(err.code, err.detail, requestId, err.errors, err.extra);
  const e = (err ?? {}) as FastifyLikeError;
  if (e.validation) {
    const errors = e.validation.map((v) => ({
      path: validationPath(e.validationContext, v.instancePath ?? '', v.params),
      message: v.message ?? 'is invalid',
    }));
    return problemOf('validation_failed', `Invalid ${e.validationContext ?? 'request'}: ${errors.map((x) => `${x.path} ${x.message}`).join('; ')}`, requestId, errors);
  }
  switch (e.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return problemOf('unsupported_media_type', e.message ?? 'Unsupported content type', requestId);
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return problemOf('payload_too_large', 'Request body is larger than this endpoint accepts', requestId);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return problemOf('malformed_json', 'Body is empty but Content-Type is application/json', requestId);
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return problemOf('malformed_json', 'Body is not valid JSON', requestId);
    default:
      break;
  }
  if (err instanceof SyntaxError || e.statusCode === 400) {
    return problemOf('malformed_json', 'Body is not valid JSON', requestId);
  }
  if (e.statusCode === 413) return problemOf('payload_too_large', 'Request body is too large', requestId);
  if (e.statusCode === 415) return problemOf('unsupported_media_type', 'Unsupported content type', requestId);
  return problemOf('internal_error', 'An internal error occurred; quote the request_id when reporting it', requestId);
}
