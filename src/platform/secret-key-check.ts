import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Db } from './db/database.js';
import { ConfigError } from './config.js';
import type { SecretBox } from './secret-box.js';

const CHECK_NAME = 'secret_key_check';
/** What is recorded is an HMAC of this fixed label under the key: it proves the key, never reveals it. */
const CHECK_LABEL = 'playline secret key check v1';

export const secretKeyCheckValue = (key: Buffer): string => `v1:${createHmac('sha256', key).update(CHECK_LABEL).digest('base64url')}`;

const mismatch = (how: string) =>
  new ConfigError(
    `PLAYLINE_SECRET_KEY (--secret-key) does not match the key this database was set up with: ${how}. ` +
      'Every instance of a deployment must share one key; start this one with the deployment\'s key ' +
      '(embedded mode without the setting: the key file <data dir>/secret.key that created the data).',
  );

/**
 * Binds the database to the secret key that seals its secrets. The first start records the
 * key's check value; a later start with another key refuses to start, naming the setting,
 * instead of answering every signed request with an error it cannot explain. A database that
 * predates the check is bound once its sealed API keys open with the key given.
 */
export async function checkSecretKey(db: Db, key: Buffer, box: SecretBox, now: number): Promise<void> {
  const expected = secretKeyCheckValue(key);
  let recorded = await readCheck(db);
  if (recorded === undefined) {
    const sealed = await db.selectFrom('api_keys').select('secret_sealed').limit(1).executeTakeFirst();
    if (sealed) {
      try {
        box.open(sealed.secret_sealed);
      } catch {
        throw mismatch('the stored API keys do not open with it');
      }
    }
    // Two instances starting at once on a fresh database: one insert wins, both compare with it.
    await db.insertInto('deployment_checks').values({ name: CHECK_NAME, value: expected, created_at: now }).onConflict((oc) => oc.column('name').doNothing()).execute();
    recorded = await readCheck(db);
  }
  const a = Buffer.from(recorded ?? '', 'utf8');
  const b = Buffer.from(expected, 'utf8');
  if (a.length !== b.length || !timingSafeEqual(a, b)) throw mismatch('its check value differs');
}

const readCheck = async (db: Db): Promise<string | undefined> =>
  (await db.selectFrom('deployment_checks').select('value').where('name', '=', CHECK_NAME).executeTakeFirst())?.value;
