import type { Insertable, Selectable, Updateable } from 'kysely';

// Timestamps are ISO 8601 UTC strings ("2026-11-21T10:00:00.000Z") on both engines: they sort
// as text, compare as text and need no per-engine conversion. JSON columns are text.

export interface RolesTable {
  id: string;
  name: string;
  description: string;
  permissions: string; // JSON array of module:action
  builtin: number; // 1 for the built-in admin role
  created_at: string;
  updated_at: string;
}

export interface OperatorsTable {
  id: string;
  email: string;
  name: string;
  password_hash: string;
  role_id: string;
  status: 'active' | 'disabled';
  timezone: string;
  created_at: string;
  updated_at: string;
}

export interface SessionsTable {
  id: string; // the token's public lookup id
  secret_hash: string;
  operator_id: string;
  created_at: string;
  last_seen_at: string;
  ip: string;
  user_agent: string;
}

export interface ApiKeysTable {
  id: string; // the key's public lookup id
  operator_id: string;
  name: string;
  scopes: string; // JSON array of module:action
  secret_hash: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

export interface AuditLogTable {
  id: string;
  at: string;
  actor_id: string | null;
  actor_email: string | null;
  via: 'session' | 'api_key' | 'system' | 'anonymous';
  ip: string | null;
  action: string;
  target_type: string | null;
  target_id: string | null;
  details: string; // JSON object
}

export interface LoginFailuresTable {
  id: string;
  at: string;
  ip: string;
  email: string;
}

export interface SettingsTable {
  key: string;
  value: string; // JSON
  updated_at: string;
}

export interface Database {
  roles: RolesTable;
  operators: OperatorsTable;
  sessions: SessionsTable;
  api_keys: ApiKeysTable;
  audit_log: AuditLogTable;
  login_failures: LoginFailuresTable;
  settings: SettingsTable;
}

export type Role = Selectable<RolesTable>;
export type Operator = Selectable<OperatorsTable>;
export type NewOperator = Insertable<OperatorsTable>;
export type OperatorUpdate = Updateable<OperatorsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
