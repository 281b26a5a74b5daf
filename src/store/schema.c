/*
 * schema.c -- every schema migration, oldest first. Migration N takes
 * PRAGMA user_version from N-1 to N inside one transaction (store.c).
 *
 * Never edit a migration that has shipped: add a new one at the end. Each
 * block names the domain module that owns its tables; only that module
 * writes them.
 */
#include "store.h"

const char *const hd_store_migrations[] = {
	/* 1: teams and agents (team), kv (store), events (events) */
	"CREATE TABLE teams ("
	"  id TEXT PRIMARY KEY,"
	"  name TEXT NOT NULL,"
	"  description TEXT NOT NULL DEFAULT '',"
	"  icon TEXT,"
	"  color TEXT,"
	"  leader_agent_id TEXT,"
	"  status TEXT NOT NULL DEFAULT 'active'"
	"    CHECK (status IN ('active', 'shutting_down', 'shutdown')),"
	"  tenant_id TEXT,"
	"  created_at INTEGER NOT NULL,"
	"  updated_at INTEGER NOT NULL"
	");"
	"CREATE TABLE agents ("
	"  id TEXT PRIMARY KEY,"
	"  name TEXT NOT NULL,"
	"  team_id TEXT REFERENCES teams(id) ON DELETE CASCADE,"
	"  role TEXT NOT NULL DEFAULT '',"
	"  runtime TEXT NOT NULL,"
	"  runtime_config TEXT NOT NULL DEFAULT '{}',"
	"  status TEXT NOT NULL DEFAULT 'idle' CHECK (status IN ('idle',"
	"    'working', 'shutdown_requested', 'shutdown', 'error')),"
	"  spawned_by TEXT,"
	"  session_key TEXT,"
	"  last_active_at INTEGER,"
	"  created_at INTEGER NOT NULL,"
	"  updated_at INTEGER NOT NULL,"
	"  archived_at INTEGER"
	");"
	"CREATE INDEX agents_team ON agents(team_id);"
	"CREATE TABLE kv ("
	"  key TEXT PRIMARY KEY,"
	"  value TEXT NOT NULL,"
	"  updated_at INTEGER NOT NULL"
	");"
	"CREATE TABLE events ("
	"  seq INTEGER PRIMARY KEY AUTOINCREMENT,"
	"  id TEXT NOT NULL,"
	"  ts INTEGER NOT NULL,"
	"  kind TEXT NOT NULL,"
	"  team_id TEXT,"
	"  task_id INTEGER,"
	"  agent_id TEXT,"
	"  data TEXT NOT NULL DEFAULT '{}'"
	");"
	"CREATE INDEX events_team ON events(team_id, seq);"
	"CREATE INDEX events_kind ON events(kind, seq);",
};

const int hd_store_nmigrations =
    (int)(sizeof(hd_store_migrations) / sizeof(hd_store_migrations[0]));
