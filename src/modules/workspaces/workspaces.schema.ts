import { Type, type Static } from '@sinclair/typebox';

export const WorkspaceSchema = Type.Object(
  {
    '@id': Type.String(),
    '@type': Type.Literal('Workspace'),
    id: Type.String({ description: 'Workspace ID (the owner of assets)' }),
    name: Type.String(),
    created_at: Type.Integer({ description: 'Unix milliseconds' }),
  },
);

export const ApiKeySchema = Type.Object(
  {
    '@id': Type.String(),
    '@type': Type.Literal('ApiKey'),
    id: Type.String(),
    owner: Type.String(),
    kind: Type.Union([Type.Literal('api'), Type.Literal('ingest')]),
    label: Type.String(),
    prefix: Type.String({ description: 'First characters of the secret' }),
    created_at: Type.Integer(),
    revoked_at: Type.Union([Type.Integer(), Type.Null()]),
    secret: Type.Optional(Type.String({ description: 'Shown once, when the key is created' })),
  },
);

export const DeletedWorkspaceSchema = Type.Object({
  '@id': Type.String(),
  '@type': Type.Literal('Workspace'),
  id: Type.String(),
  name: Type.String(),
  message: Type.Literal('Deleted'),
  deleted: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
    description: 'Rows deleted per module (workspace: the workspace and its keys); statistics and caches are erased too',
  }),
});

export const CreateWorkspaceBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });
export const CreateKeyBody = Type.Object(
  {
    kind: Type.Optional(Type.Union([Type.Literal('api'), Type.Literal('ingest')])),
    label: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);
export const WorkspaceParams = Type.Object({ workspace_id: Type.String({ minLength: 1, maxLength: 64 }) });
export const KeyParams = Type.Object({ workspace_id: Type.String({ minLength: 1, maxLength: 64 }), key_id: Type.String({ minLength: 1, maxLength: 64 }) });

export const collectionOf = <T extends ReturnType<typeof Type.Object>>(item: T) =>
  Type.Object({
    '@id': Type.String(),
    '@type': Type.Literal('Collection'),
    items: Type.Array(item),
    total_items: Type.Integer(),
  });

export type WorkspaceView = Static<typeof WorkspaceSchema>;
export type ApiKeyView = Static<typeof ApiKeySchema>;
