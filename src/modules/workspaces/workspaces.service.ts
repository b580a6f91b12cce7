import { randomBytes } from 'node:crypto';
import type { KeyKind, SigningKey } from '../../platform/auth/signing-key.js';
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import { AppError } from '../../platform/errors.js';
import type { IdGenerator } from '../../platform/ids.js';
import type { SecretBox } from '../../platform/secret-box.js';
import * as repo from './workspaces.repository.js';

export interface Workspace {
  id: string;
  name: string;
  createdAt: number;
}

export interface ApiKeyInfo {
  id: string;
  workspaceId: string;
  kind: KeyKind;
  label: string;
  prefix: string;
  createdAt: number;
  revokedAt: number | null;
}

/** A key as created: the only time its secret is shown. */
export interface CreatedApiKey extends ApiKeyInfo {
  secret: string;
}

export interface WorkspaceServiceDeps {
  db: Db;
  box: SecretBox;
  clock: Clock;
  ids: IdGenerator;
}

const toWorkspace = (row: repo.WorkspaceRow): Workspace => ({ id: row.id, name: row.name, createdAt: row.created_at });

const toKeyInfo = (row: repo.ApiKeyRow): ApiKeyInfo => ({
  id: row.id,
  workspaceId: row.workspace_id,
  kind: row.kind as KeyKind,
  label: row.label,
  prefix: row.prefix,
  createdAt: row.created_at,
  revokedAt: row.revoked_at,
});

/** 40 characters of URL-safe base64, like the platform's API keys. */
/**
 * A new API key's secret: 40 URL-safe characters. Never one starting with '-': a key is pasted
 * into command lines (`playline sign --key <key>`), where a leading '-' reads as an option
 * (`-V...` printed the CLI's version instead of signing).
 */
export const newKeySecret = (): string => {
  for (;;) {
    const secret = randomBytes(30).toString('base64url');
    if (!secret.startsWith('-')) return secret;
  }
};

/** Workspaces and their API keys; used by the admin API, the CLI and authentication. */
export class WorkspaceService {
  constructor(private readonly deps: WorkspaceServiceDeps) {}

  async createWorkspace(name: string): Promise<Workspace> {
    const row = { id: this.deps.ids.hex(), name, created_at: this.deps.clock.now() };
    await repo.insertWorkspace(this.deps.db, row);
    return toWorkspace(row);
  }

  async getWorkspace(id: string): Promise<Workspace> {
    const row = await repo.findWorkspace(this.deps.db, id);
    if (!row) throw new AppError('not_found', `Workspace ${id} does not exist`);
    return toWorkspace(row);
  }

  async listWorkspaces(): Promise<Workspace[]> {
    return (await repo.listWorkspaces(this.deps.db)).map(toWorkspace);
  }

  async countWorkspaces(): Promise<number> {
    return repo.countWorkspaces(this.deps.db);
  }

  async createKey(workspaceId: string, options: { kind?: KeyKind; label?: string } = {}): Promise<CreatedApiKey> {
    await this.getWorkspace(workspaceId);
    const secret = newKeySecret();
    const row: repo.ApiKeyRow = {
      id: `key_${this.deps.ids.hex()}`,
      workspace_id: workspaceId,
      kind: options.kind ?? 'api',
      label: options.label ?? '',
      prefix: secret.slice(0, 6),
      secret_sealed: this.deps.box.seal(secret),
      created_at: this.deps.clock.now(),
      revoked_at: null,
    };
    await repo.insertApiKey(this.deps.db, row);
    return { ...toKeyInfo(row), secret };
  }

  async listKeys(workspaceId: string): Promise<ApiKeyInfo[]> {
    await this.getWorkspace(workspaceId);
    return (await repo.listApiKeys(this.deps.db, workspaceId)).map(toKeyInfo);
  }

  async getKey(workspaceId: string, keyId: string): Promise<ApiKeyInfo> {
    const row = await repo.findApiKey(this.deps.db, workspaceId, keyId);
    if (!row) throw new AppError('not_found', `Key ${keyId} does not exist`);
    return toKeyInfo(row);
  }

  async revokeKey(workspaceId: string, keyId: string): Promise<ApiKeyInfo> {
    const existing = await repo.findApiKey(this.deps.db, workspaceId, keyId);
    if (!existing) throw new AppError('not_found', `Key ${keyId} does not exist in workspace ${workspaceId}`);
    if (existing.revoked_at === null) await repo.revokeApiKey(this.deps.db, workspaceId, keyId, this.deps.clock.now());
    const row = await repo.findApiKey(this.deps.db, workspaceId, keyId);
    return toKeyInfo(row ?? existing);
  }

  /** Every key of a workspace with its secret opened, for signature checks. Null: no such workspace. */
  async loadSigningKeys(workspaceId: string): Promise<SigningKey[] | null> {
    const workspace = await repo.findWorkspace(this.deps.db, workspaceId);
    if (!workspace) return null;
    const rows = await repo.listApiKeys(this.deps.db, workspaceId);
    return rows.map((row) => ({
      id: row.id,
      kind: row.kind as KeyKind,
      secret: Buffer.from(this.deps.box.open(row.secret_sealed), 'utf8'),
      revoked: row.revoked_at !== null,
    }));
  }
}
