import type { SecretBox } from '../../platform/secret-box.js';
import type { SecretField } from '../../platform/secret-fields.js';
import { SECRET_MASK, type PlatformConfigInput, type TargetCreateBody } from './syndication.schema.js';

/**
 * Secrets of a publishing target (`target_stream`, `platform_config.password`,
 * `platform_config.stream_id`) and the only ways they leave memory: sealed for storage, or
 * masked for responses and logs. Their names come from the platform's one list of secret fields
 * (secret-fields.ts), which the logger redacts: a name outside it does not compile.
 */
export const secretFieldNames = ['target_stream', 'password', 'stream_id'] as const satisfies readonly SecretField[];
export type SecretFieldName = (typeof secretFieldNames)[number];
export type TargetSecrets = Partial<Record<SecretFieldName, string>>;

/** Encrypted JSON of TargetSecrets. Storage only accepts secrets in this form. */
export type SealedSecrets = string & { readonly __sealed: 'SyndicationTargetSecrets' };

/** The part of the platform's SecretBox this module uses. */
export type SecretSealer = Pick<SecretBox, 'seal' | 'open'>;

export type PublicPlatformConfig = Omit<PlatformConfigInput, 'password' | 'stream_id'>;

/** A target ready for storage: public fields in clear, secrets sealed, and which secrets exist. */
export interface SealedTarget {
  description: string;
  platform: TargetCreateBody['platform'];
  target_protocol: TargetCreateBody['target_protocol'];
  platform_config: PublicPlatformConfig;
  secrets: SealedSecrets;
  /** Which secret fields are set, so responses can mask them without decrypting. */
  secret_fields: SecretFieldName[];
}

/**
 * Seals the target for storage. With `previous` (the stored form and its clear target), secrets
 * that did not change keep their sealed blob: no needless encryption on a PATCH that leaves
 * them alone.
 */
export function sealTarget(
  target: TargetCreateBody,
  box: SecretSealer,
  previous?: { sealed: SealedTarget; clear: TargetCreateBody },
): SealedTarget {
  const { password: _password, stream_id: _streamId, ...publicConfig } = target.platform_config ?? {};
  const secrets = secretsOf(target);
  const unchanged = previous !== undefined && sameSecrets(secrets, secretsOf(previous.clear));
  return {
    description: target.description ?? '',
    platform: target.platform,
    target_protocol: target.target_protocol,
    platform_config: publicConfig,
    secrets: unchanged ? previous.sealed.secrets : (box.seal(JSON.stringify(secrets)) as SealedSecrets),
    secret_fields: secretFieldNames.filter((name) => secrets[name] !== undefined),
  };
}

function secretsOf(target: TargetCreateBody): TargetSecrets {
  const secrets: TargetSecrets = {};
  if (target.target_stream !== undefined) secrets.target_stream = target.target_stream;
  if (target.platform_config?.password !== undefined) secrets.password = target.platform_config.password;
  if (target.platform_config?.stream_id !== undefined) secrets.stream_id = target.platform_config.stream_id;
  return secrets;
}

const sameSecrets = (a: TargetSecrets, b: TargetSecrets): boolean => secretFieldNames.every((name) => a[name] === b[name]);

/** The target with its secrets in clear, for a PATCH merge or a connection test; never for a response. */
export function openTarget(sealed: SealedTarget, box: SecretSealer): TargetCreateBody {
  const secrets = JSON.parse(box.open(sealed.secrets)) as TargetSecrets;
  const platform_config: PlatformConfigInput = { ...sealed.platform_config };
  if (secrets.password !== undefined) platform_config.password = secrets.password;
  if (secrets.stream_id !== undefined) platform_config.stream_id = secrets.stream_id;
  const target: TargetCreateBody = {
    description: sealed.description,
    platform: sealed.platform,
    target_protocol: sealed.target_protocol,
    platform_config,
  };
  if (secrets.target_stream !== undefined) target.target_stream = secrets.target_stream;
  return target;
}

/** platform_config as shown: public keys as stored, each secret that exists as the mask. */
export function maskedConfig(sealed: Pick<SealedTarget, 'platform_config' | 'secret_fields'>): PlatformConfigInput {
  const config: PlatformConfigInput = { ...sealed.platform_config };
  if (sealed.secret_fields.includes('password')) config.password = SECRET_MASK;
  if (sealed.secret_fields.includes('stream_id')) config.stream_id = SECRET_MASK;
  return config;
}
