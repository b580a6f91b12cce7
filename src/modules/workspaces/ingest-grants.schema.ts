import { Type, type Static } from '@sinclair/typebox';

export const IngestGrantSchema = Type.Object({
  '@id': Type.String(),
  '@type': Type.Literal('IngestGrant'),
  workspace_id: Type.String({ description: 'The workspace whose statistics the grantee\'s ingest keys may write' }),
  grantee_id: Type.String({ description: 'The workspace whose ingest keys may submit events for workspace_id' }),
  created_at: Type.Integer({ description: 'Unix milliseconds' }),
});
export type IngestGrantView = Static<typeof IngestGrantSchema>;

export const GrantParams = Type.Object({
  workspace_id: Type.String({ minLength: 1, maxLength: 64 }),
  grantee_id: Type.String({ minLength: 1, maxLength: 64 }),
});
