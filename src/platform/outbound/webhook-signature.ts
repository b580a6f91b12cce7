import { createHmac, randomBytes } from 'node:crypto';

const secretPrefix = 'whsec_';
/** 32 random bytes, as most Standard Webhooks senders use; receivers accept 24–64. */
const secretBytes = 32;

/** The three Standard Webhooks headers carried by every callback request (a plain header record, sent as it is). */
export type WebhookHeaders = {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
};

/** A new signing secret in the Standard Webhooks form `whsec_<base64>`. */
export const generateSigningSecret = (): string => secretPrefix + randomBytes(secretBytes).toString('base64');

/** Whether a string is a well-formed signing secret (prefix, base64 alphabet, 24–64 key bytes). */
export const isSigningSecret = (secret: string): boolean => decodeSecret(secret) !== undefined;

const decodeSecret = (secret: string): Buffer | undefined => {
  if (!secret.startsWith(secretPrefix)) return undefined;
  const encoded = secret.slice(secretPrefix.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || encoded.length % 4 !== 0) return undefined;
  const key = Buffer.from(encoded, 'base64');
  return key.length >= 24 && key.length <= 64 ? key : undefined;
};

/**
 * Signs callback bodies for one workspace. Holds the decoded keys so the base64 decode is paid once,
 * not per report. With several secrets (during a rotation's grace period) every one signs, and the
 * header lists each signature separated by a space, as the spec allows, so a receiver holding either
 * the old or the new secret accepts the request.
 */
export class WebhookSigner {
  private readonly keys: Buffer[];

  constructor(secrets: readonly string[]) {
    this.keys = secrets.map((secret) => {
      const key = decodeSecret(secret);
      if (!key) throw new Error('invalid webhook signing secret');
      return key;
    });
    if (this.keys.length === 0) throw new Error('a webhook signer needs at least one secret');
  }

  /**
   * Headers for one message. `id` must be unique per message (receivers use it to deduplicate);
   * `timestampSeconds` is Unix seconds; `body` is the exact byte string that will be sent.
   */
  sign(id: string, timestampSeconds: number, body: string): WebhookHeaders {
    const timestamp = String(Math.floor(timestampSeconds));
    const signedContent = `${id}.${timestamp}.${body}`;
    const signatures = this.keys.map((key) => `v1,${createHmac('sha256', key).update(signedContent).digest('base64')}`);
    return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signatures.join(' ') };
  }
}
