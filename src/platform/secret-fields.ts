/**
 * The one list of credential-bearing field names (issue 42: stream keys and passphrases were in
 * neither of the two lists kept before). The logger redacts these fields wherever a log call puts
 * them (top level or one level down); a module that keeps secrets of its own (publishing targets)
 * names its secret fields from this list, so a new secret field is added here once and is then
 * both sealed by its module and kept out of the logs.
 */
export const SECRET_FIELDS = [
  'secret',
  'signing_secret',
  'password',
  'passphrase',
  'stream_key',
  'streamKey',
  'stream_id',
  'target_stream',
  'apiKey',
  'api_key',
  'authorization',
] as const;

export type SecretField = (typeof SECRET_FIELDS)[number];

/** Whether a field name is in the one list. */
export const isSecretField = (name: string): name is SecretField => (SECRET_FIELDS as readonly string[]).includes(name);
