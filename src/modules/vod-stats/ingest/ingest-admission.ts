import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../../platform/errors.js';
import { BytesInFlight, releaseWithReply } from '../../../platform/http/bytes-in-flight.js';
import { MAX_EVENT_BATCH_BYTES } from '../events.schema.js';

/** Seconds a client refused for lack of room is told to wait (Retry-After). */
export const INGEST_RETRY_AFTER_S = 1;

/**
 * Bounds the ingest bytes one instance holds at once (bodies being received, parsed, journaled
 * and counted), so concurrent maximum-size batches cannot exhaust its memory: a batch that
 * would pass the limit is refused (503 + Retry-After) before its body is read. One batch is
 * always admitted, whatever its size, so a limit below the body limit never locks ingest out.
 * Taken and given back through the request's one lease (platform/http/bytes-in-flight.ts).
 */
export class IngestAdmission extends BytesInFlight {
  constructor(maxBytes: number) {
    super(maxBytes, true);
  }

  get bytesInFlight(): number {
    return this.bytes;
  }
}

/**
 * What a request may bring: its Content-Length, or the body limit when it sends none (chunked).
 * Undefined when the declared length is past the body limit: Fastify answers 413 unread.
 */
const bytesOf = (request: FastifyRequest): number | undefined => {
  const header = request.headers['content-length'];
  if (header === undefined) return MAX_EVENT_BATCH_BYTES;
  const declared = Number(header);
  if (!Number.isSafeInteger(declared) || declared < 0) return MAX_EVENT_BATCH_BYTES;
  return declared > MAX_EVENT_BATCH_BYTES ? undefined : declared;
};

/**
 * onRequest hook of the ingest route: reserves the batch's bytes until its answer is sent (or
 * the connection closes), or refuses it with 503 `service_unavailable` and Retry-After. The
 * refusal also closes the connection, so the unread body is not received for nothing.
 */
export const admitIngest = (admission: IngestAdmission) =>
  function admit(request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void {
    const bytes = bytesOf(request);
    if (bytes === undefined) return done();
    const lease = admission.lease(bytes);
    if (!lease) {
      void reply.header('retry-after', String(INGEST_RETRY_AFTER_S)).header('connection', 'close');
      return done(new AppError('service_unavailable', `Too many event bytes are being ingested right now; retry in ${INGEST_RETRY_AFTER_S} s`));
    }
    // Given back once, when the answer is sent or the connection is gone, whichever happens.
    releaseWithReply(reply, lease);
    done();
  };
