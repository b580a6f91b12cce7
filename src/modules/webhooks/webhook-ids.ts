import type { Clock } from '../../platform/clock.js';
import type { IdGenerator } from '../../platform/ids.js';
import type { SecretBox } from '../../platform/secret-box.js';
import { WebhookSigner } from '../../platform/outbound/webhook-signature.js';
import type { SubscriptionRow } from './webhooks.repository.js';

/**
 * `<prefix>` + 12 hex digits of the time in ms + 20 from the id generator: ids in time order land
 * at the end of their primary-key index (as the delivery log's `att_` ids do, see DeliveryLogStore.newId).
 */
export const timeOrderedId = (prefix: string, clock: Clock, ids: IdGenerator): string => {
  const ms = Math.max(0, Math.min(Math.floor(clock.now()), 0xffff_ffff_ffff));
  return `${prefix}${ms.toString(16).padStart(12, '0')}${ids.hex().slice(-20)}`;
};

/** The subscription's signer: its secret, and the one replaced by the last rotation while it still signs. */
export const subscriptionSigner = (row: SubscriptionRow, box: SecretBox, now: number): WebhookSigner => {
  const secrets = [box.open(row.secret_sealed)];
  if (row.previous_secret_sealed !== null && (row.previous_secret_expires_at ?? 0) > now) secrets.push(box.open(row.previous_secret_sealed));
  return new WebhookSigner(secrets);
};
