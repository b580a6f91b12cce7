/**
 * What one callback attempt came to. `refused`, `timeout`, `tls_error` and `ssrf_refused` mean the
 * endpoint could not be reached; `non_200` and `reset` mean it was reached but did not accept.
 */
export type DeliveryOutcomeKind =
  | 'delivered'
  | 'non_200'
  | 'timeout'
  | 'refused'
  | 'tls_error'
  | 'reset'
  | 'ssrf_refused';

export const deliveryOutcomeKinds: readonly DeliveryOutcomeKind[] = [
  'delivered',
  'non_200',
  'timeout',
  'refused',
  'tls_error',
  'reset',
  'ssrf_refused',
];

/**
 * What an attempt in the delivery log came to: a delivery outcome, or `dropped` (the report was
 * never sent: the dispatcher dropped it, its detail says why, see `DropReason`).
 */
export type LoggedOutcomeKind = DeliveryOutcomeKind | 'dropped';

export const loggedOutcomeKinds: readonly LoggedOutcomeKind[] = [...deliveryOutcomeKinds, 'dropped'];

export interface DeliveryOutcome {
  outcome: DeliveryOutcomeKind;
  /** The HTTP status received, or null when no response arrived. */
  status: number | null;
  /** Milliseconds from sending to the response headers (or to the failure). */
  latencyMs: number;
  /** Why it failed: an error code, the refusal reason, or the redirect that was not followed. */
  detail?: string;
}

/** Outcomes after which the endpoint counts as unreachable: its queue is discarded and it pauses. */
export const isUnreachable = (outcome: DeliveryOutcomeKind): boolean =>
  outcome === 'timeout' || outcome === 'refused' || outcome === 'tls_error' || outcome === 'ssrf_refused';

const timeoutCodes = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);
const refusedCodes = new Set([
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'EADDRNOTAVAIL',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
const resetCodes = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);
const certificateCodes = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REVOKED',
  'EPROTO',
]);

const codeOf = (error: unknown): string | undefined => {
  if (typeof error !== 'object' || error === null) return undefined;
  if ('code' in error && typeof error.code === 'string') return error.code;
  if ('cause' in error) return codeOf(error.cause);
  if (error instanceof AggregateError) return codeOf(error.errors[0]);
  return undefined;
};

/** Maps a transport error (node:net, node:tls, undici) to an outcome kind and a short detail. */
export const classifyTransportError = (error: unknown): { outcome: DeliveryOutcomeKind; detail: string } => {
  const code = codeOf(error) ?? 'UNKNOWN';
  if (timeoutCodes.has(code)) return { outcome: 'timeout', detail: code };
  if (refusedCodes.has(code)) return { outcome: 'refused', detail: code };
  if (certificateCodes.has(code) || code.startsWith('ERR_TLS_') || code.startsWith('ERR_SSL_') || code.startsWith('ERR_OSSL_')) {
    return { outcome: 'tls_error', detail: code };
  }
  if (resetCodes.has(code)) return { outcome: 'reset', detail: code };
  // Anything else happened on a connection we had: treat it like a reset rather than guess unreachability.
  return { outcome: 'reset', detail: code };
};
