/** Reaching a running server from the CLI, with failures that say what went wrong where. */

interface ErrorWithCode {
  code?: string;
  message?: string;
  errors?: ErrorWithCode[];
  cause?: unknown;
}

const codeOf = (error: ErrorWithCode | undefined): string | undefined => error?.code ?? error?.errors?.find((e) => e.code)?.code;

const MEANING: Record<string, string> = {
  ECONNREFUSED: 'connection refused: nothing listens there (is the server running, on that port?)',
  ENOTFOUND: 'host not found (DNS)',
  EAI_AGAIN: 'host name lookup failed for now (DNS)',
  ECONNRESET: 'the connection was reset',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'timed out connecting',
  UND_ERR_CONNECT_TIMEOUT: 'timed out connecting',
  UND_ERR_HEADERS_TIMEOUT: 'timed out waiting for the answer',
  UND_ERR_SOCKET: 'the connection closed unexpectedly',
};

/**
 * `fetch failed` in words: the URL and the cause (refused, DNS, TLS, timeout), e.g.
 * "cannot reach http://127.0.0.1:9/healthz: connection refused: nothing listens there (ECONNREFUSED)".
 */
export function describeFetchFailure(url: string, error: unknown): string {
  if ((error as { name?: string } | undefined)?.name === 'TimeoutError') return `cannot reach ${url}: no answer in time`;
  const cause = ((error as ErrorWithCode | undefined)?.cause ?? error) as ErrorWithCode | undefined;
  const code = codeOf(cause);
  const message = cause?.message ?? String(error);
  const tls = code !== undefined && /^(ERR_TLS|ERR_SSL|CERT_|DEPTH_ZERO|SELF_SIGNED|UNABLE_TO_)/.test(code);
  const tlsByText = /SSL|TLS|certificate/i.test(message);
  let why: string;
  if (code !== undefined && MEANING[code]) why = `${MEANING[code]} (${code})`;
  else if (tls || tlsByText) why = `TLS failed: ${message}${code ? ` (${code})` : ''} (is it https? is the certificate trusted?)`;
  else why = code ? `${message} (${code})` : message;
  return `cannot reach ${url}: ${why}`;
}

/** `fetch`, whose network failures throw an Error naming the URL and the cause. */
export async function fetchOrExplain(url: string, init?: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    // Never the query: it may hold a signature.
    throw new Error(describeFetchFailure(url.split('?')[0] ?? url, error), { cause: error });
  }
}

/** Checks that a Playline server answers at `baseUrl` (its /healthz), before a command relies on it. */
export async function checkServer(baseUrl: string): Promise<void> {
  const url = `${baseUrl.replace(/\/+$/, '')}/healthz`;
  const response = await fetchOrExplain(url, { signal: AbortSignal.timeout(10_000) });
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`${url} answered ${response.status}: is ${baseUrl} a Playline server?`);
}
