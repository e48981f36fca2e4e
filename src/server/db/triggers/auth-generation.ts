import { defineTrigger } from './define.js';

// Any change to a session, an API key, an operator, a role or the IP allow-list bumps
// auth_state.generation in the same transaction, whoever writes; each request reads that one
// number and a new one empties the authentication cache (auth/cache.ts). On PostgreSQL all
// these triggers execute one shared function, auth_generation_bump.
// From 20261125T020000Z_auth_generation.

const BUMP = 'update auth_state set generation = generation + 1 where id = 1';

// Named as the migration numbered them: table, then the place in its list.
const WATCH: [name: string, table: string, event: string, when: string | null][] = [
  ['api_keys_auth_generation_0', 'api_keys', 'update', null],
  ['api_keys_auth_generation_1', 'api_keys', 'delete', null],
  ['operators_auth_generation_2', 'operators', 'update', null],
  ['operators_auth_generation_3', 'operators', 'delete', null],
  ['roles_auth_generation_4', 'roles', 'update', null],
  ['roles_auth_generation_5', 'roles', 'delete', null],
  ['sessions_auth_generation_6', 'sessions', 'update', null],
  ['sessions_auth_generation_7', 'sessions', 'delete', null],
  ['settings_auth_generation_8', 'settings', 'insert', "new.key = 'ip_allowlist'"],
  ['settings_auth_generation_9', 'settings', 'update', "new.key = 'ip_allowlist' or old.key = 'ip_allowlist'"],
  ['settings_auth_generation_10', 'settings', 'delete', "old.key = 'ip_allowlist'"],
];

// Provider users, their sessions and keys, and their provider (archived, portal turned off):
// from 20261130T000000Z_provider_portal.
const PROVIDER_WATCH: typeof WATCH = [
  ['provider_users_auth_generation_0', 'provider_users', 'update', null],
  ['provider_users_auth_generation_1', 'provider_users', 'delete', null],
  ['provider_sessions_auth_generation_2', 'provider_sessions', 'update', null],
  ['provider_sessions_auth_generation_3', 'provider_sessions', 'delete', null],
  ['provider_api_keys_auth_generation_4', 'provider_api_keys', 'update', null],
  ['provider_api_keys_auth_generation_5', 'provider_api_keys', 'delete', null],
  ['traffic_providers_auth_generation_6', 'traffic_providers', 'update', null],
];

const define = ([name, table, event, when]: (typeof WATCH)[number]) =>
  defineTrigger(name, table, event, () => ({ when, body: [BUMP] }), 'auth_generation_bump');

export const PROVIDER_AUTH_GENERATION_TRIGGERS = PROVIDER_WATCH.map(define);

export const AUTH_GENERATION_TRIGGERS = [...WATCH.map(define), ...PROVIDER_AUTH_GENERATION_TRIGGERS];
