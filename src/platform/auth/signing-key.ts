/** 'api' (calls the owner's API) or 'ingest' (submits events for its workspace and those that granted it, nothing else). */
export type KeyKind = 'api' | 'ingest';

/** A workspace key with its secret opened, as signature checks need it. */
export interface SigningKey {
  id: string;
  kind: KeyKind;
  secret: Buffer;
  revoked: boolean;
}
