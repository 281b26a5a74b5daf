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
	"  seq INTEGER PRIMARY KEY,"
	"  id TEXT NOT NULL,"
	"  ts INTEGER NOT NULL,"
	"  kind TEXT NOT NULL,"
	"  team_id TEXT,"
	"  task_id INTEGER,"
	"  agent_id TEXT,"
	"  data TEXT NOT NULL DEFAULT '{}'"
	");"
	"CREATE INDEX events_team ON events(team_id, seq);",

	/* 2: the room (room) */
	"CREATE TABLE team_chat ("
	"  id TEXT PRIMARY KEY,"
	"  room_id TEXT NOT NULL,"
	"  team_id TEXT NOT NULL,"
	"  author_agent_id TEXT NOT NULL,"
	"  body TEXT NOT NULL,"
	"  kind TEXT NOT NULL CHECK (kind IN ('peer', 'system', 'user')),"
	"  created_at INTEGER NOT NULL,"
	"  seq INTEGER NOT NULL,"
	"  UNIQUE (room_id, seq)"
	");"
	"CREATE INDEX team_chat_team ON team_chat(team_id);",

	/* 3: mailboxes (mailbox) */
	"CREATE TABLE messages ("
	"  id INTEGER PRIMARY KEY AUTOINCREMENT,"
	"  team_id TEXT NOT NULL,"
	"  from_agent TEXT NOT NULL,"
	"  to_agent TEXT NOT NULL,"
	"  type TEXT NOT NULL CHECK (type IN ('message', 'broadcast',"
	"    'shutdown_request', 'shutdown_response', 'idle', 'task_update',"
	"    'mention')),"
	"  content TEXT NOT NULL,"
	"  summary TEXT,"
	"  request_id TEXT,"
	"  approve INTEGER,"
	"  reason TEXT,"
	"  conversation_id TEXT,"
	"  created_at INTEGER NOT NULL,"
	"  delivered_at INTEGER"
	");"
	"CREATE INDEX messages_inbox ON messages(to_agent, id)"
	"  WHERE delivered_at IS NULL;"
	"CREATE INDEX messages_team ON messages(team_id, id);"
	"CREATE INDEX messages_request ON messages(request_id)"
	"  WHERE request_id IS NOT NULL;",

	/* 4: the board (board) */
	"CREATE TABLE tasks ("
	"  id INTEGER PRIMARY KEY AUTOINCREMENT,"
	"  team_id TEXT NOT NULL,"
	"  subject TEXT NOT NULL,"
	"  description TEXT NOT NULL DEFAULT '',"
	"  active_form TEXT,"
	"  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending',"
	"    'claimed', 'in_progress', 'completed', 'failed', 'cancelled')),"
	"  owner TEXT,"
	"  priority INTEGER NOT NULL DEFAULT 0,"
	"  metadata TEXT NOT NULL DEFAULT '{}',"
	"  result TEXT,"
	"  created_by TEXT,"
	"  created_at INTEGER NOT NULL,"
	"  claimed_at INTEGER,"
	"  started_at INTEGER,"
	"  completed_at INTEGER,"
	"  updated_at INTEGER NOT NULL"
	");"
	"CREATE INDEX tasks_ready ON tasks(team_id, status, priority DESC, id);"
	"CREATE INDEX tasks_owner ON tasks(owner, status);"
	"CREATE TABLE task_deps ("
	"  task_id INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,"
	"  depends_on INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,"
	"  PRIMARY KEY (task_id, depends_on)"
	") WITHOUT ROWID;"
	"CREATE INDEX task_deps_rev ON task_deps(depends_on, task_id);"
	"CREATE TABLE task_comments ("
	"  id INTEGER PRIMARY KEY AUTOINCREMENT,"
	"  task_id INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,"
	"  author TEXT NOT NULL,"
	"  body TEXT NOT NULL,"
	"  created_at INTEGER NOT NULL"
	");"
	"CREATE INDEX task_comments_task ON task_comments(task_id, id);",

	/* 5: conversations (conversation/): each conversation, its
	 * queued messages (deliveries: arrival order = id) and its replies
	 * (completion order = seq; one per delivery) */
	"CREATE TABLE conversations ("
	"  id TEXT PRIMARY KEY,"
	"  team_id TEXT NOT NULL,"
	"  origin TEXT NOT NULL,"
	"  status TEXT NOT NULL DEFAULT 'running'"
	"    CHECK (status IN ('running', 'completed', 'failed')),"
	"  pending INTEGER NOT NULL DEFAULT 1,"
	"  total_messages INTEGER NOT NULL DEFAULT 0,"
	"  created_at INTEGER NOT NULL,"
	"  completed_at INTEGER,"
	"  response TEXT,"
	"  message TEXT NOT NULL,"
	"  target TEXT NOT NULL,"
	"  max_messages INTEGER NOT NULL DEFAULT 15,"
	"  owner TEXT,"
	"  owner_pid INTEGER,"
	"  owner_start INTEGER"
	");"
	"CREATE INDEX conversations_team ON conversations(team_id, created_at);"
	"CREATE INDEX conversations_running ON conversations(status)"
	"  WHERE status = 'running';"
	"CREATE TABLE conversation_deliveries ("
	"  id INTEGER PRIMARY KEY AUTOINCREMENT,"
	"  conversation_id TEXT NOT NULL"
	"    REFERENCES conversations(id) ON DELETE CASCADE,"
	"  to_agent TEXT NOT NULL,"
	"  from_agent TEXT,"
	"  body TEXT NOT NULL,"
	"  prompt TEXT NOT NULL,"
	"  state TEXT NOT NULL DEFAULT 'queued'"
	"    CHECK (state IN ('queued', 'running', 'done')),"
	"  created_at INTEGER NOT NULL,"
	"  started_at INTEGER,"
	"  finished_at INTEGER"
	");"
	"CREATE INDEX conversation_deliveries_agent"
	"  ON conversation_deliveries(to_agent, state, id);"
	"CREATE INDEX conversation_deliveries_conv"
	"  ON conversation_deliveries(conversation_id, state);"
	"CREATE TABLE conversation_replies ("
	"  conversation_id TEXT NOT NULL"
	"    REFERENCES conversations(id) ON DELETE CASCADE,"
	"  seq INTEGER NOT NULL,"
	"  delivery_id INTEGER NOT NULL UNIQUE"
	"    REFERENCES conversation_deliveries(id) ON DELETE CASCADE,"
	"  agent TEXT NOT NULL,"
	"  body TEXT NOT NULL,"
	"  is_error INTEGER NOT NULL DEFAULT 0,"
	"  created_at INTEGER NOT NULL,"
	"  PRIMARY KEY (conversation_id, seq)"
	");",

	/* 6: exchanges: the room lock (room/lock.c), session lineage
	 * (team/session.c), budgets (team/budget.c). A budget row without
	 * limit_cents tracks spend only. */
	"CREATE TABLE room_locks ("
	"  room_id TEXT PRIMARY KEY,"
	"  holder TEXT NOT NULL,"
	"  pid INTEGER NOT NULL,"
	"  expires_at INTEGER NOT NULL"
	");"
	"CREATE TABLE sessions ("
	"  id TEXT PRIMARY KEY,"
	"  agent_id TEXT NOT NULL,"
	"  team_id TEXT,"
	"  runtime TEXT NOT NULL,"
	"  native_session_id TEXT,"
	"  parent_session_id TEXT,"
	"  created_at INTEGER NOT NULL"
	");"
	"CREATE INDEX sessions_agent ON sessions(agent_id, created_at);"
	"CREATE TABLE budgets ("
	"  scope TEXT NOT NULL CHECK (scope IN ('agent', 'team')),"
	"  subject_id TEXT NOT NULL,"
	"  limit_cents INTEGER,"
	"  mode TEXT NOT NULL DEFAULT 'warn' CHECK (mode IN ('warn', 'cap')),"
	"  spent_microcents INTEGER NOT NULL DEFAULT 0,"
	"  updated_at INTEGER NOT NULL,"
	"  PRIMARY KEY (scope, subject_id)"
	");",

	/* 7: events (events). events_team was never chosen by the planner:
	 * every read filters with "?2 IS NULL OR team_id = ?2" and walks the
	 * rowid, which stops after LIMIT matches. Keeping it cost one more
	 * b-tree page written by every commit that appends an event, about a
	 * sixth of the time of a room post (bench_room). */
	"DROP INDEX events_team;",

	/* 8: every CHECK (col IN (three or more names)) becomes the same test
	 * spelled with OR. SQLite 3.40 evaluates such an IN list by building a
	 * temporary index on each INSERT or UPDATE of the column, about 35k
	 * instructions: a fifth of a room post, and paid on every agent status
	 * change, claim and message. The constraint means the same, so only
	 * the text in sqlite_master changes, the documented way (SQLite's "ALTER
	 * TABLE: other kinds of schema changes"); the rows and their pages are
	 * untouched and connections with the old text cached stay correct.
	 * RESET (not OFF) makes the migrating connection reparse the schema
	 * too; with OFF it kept the IN lists for as long as it lived. */
	"PRAGMA writable_schema = ON;"
	"UPDATE sqlite_master SET sql = replace(sql, 'CHECK (status IN "
	"(''active'', ''shutting_down'', ''shutdown''))', 'CHECK "
	"(status = ''active'' OR status = ''shutting_down'' OR status "
	"= ''shutdown'')') WHERE type = 'table' AND name = 'teams';"
	"UPDATE sqlite_master SET sql = replace(sql, 'CHECK (status IN "
	"(''idle'',    ''working'', ''shutdown_requested'', "
	"''shutdown'', ''error''))', 'CHECK (status = ''idle'' OR "
	"status = ''working'' OR status = ''shutdown_requested'' OR "
	"status = ''shutdown'' OR status = ''error'')') WHERE type = "
	"'table' AND name = 'agents';"
	"UPDATE sqlite_master SET sql = replace(sql, 'CHECK (kind IN "
	"(''peer'', ''system'', ''user''))', 'CHECK (kind = ''peer'' "
	"OR kind = ''system'' OR kind = ''user'')') WHERE type = "
	"'table' AND name = 'team_chat';"
	"UPDATE sqlite_master SET sql = replace(sql, 'CHECK (type IN "
	"(''message'', ''broadcast'',    ''shutdown_request'', "
	"''shutdown_response'', ''idle'', ''task_update'',    "
	"''mention''))', 'CHECK (type = ''message'' OR type = "
	"''broadcast'' OR type = ''shutdown_request'' OR type = "
	"''shutdown_response'' OR type = ''idle'' OR type = "
	"''task_update'' OR type = ''mention'')') WHERE type = 'table' "
	"AND name = 'messages';"
	"UPDATE sqlite_master SET sql = replace(sql, 'CHECK (status IN "
	"(''pending'',    ''claimed'', ''in_progress'', ''completed'', "
	"''failed'', ''cancelled''))', 'CHECK (status = ''pending'' OR "
	"status = ''claimed'' OR status = ''in_progress'' OR status = "
	"''completed'' OR status = ''failed'' OR status = "
	"''cancelled'')') WHERE type = 'table' AND name = 'tasks';"
	"UPDATE sqlite_master SET sql = replace(sql, 'CHECK (status IN "
	"(''running'', ''completed'', ''failed''))', 'CHECK (status = "
	"''running'' OR status = ''completed'' OR status = "
	"''failed'')') WHERE type = 'table' AND name = 'conversations';"
	"UPDATE sqlite_master SET sql = replace(sql, 'CHECK (state IN "
	"(''queued'', ''running'', ''done''))', 'CHECK (state = "
	"''queued'' OR state = ''running'' OR state = ''done'')') "
	"WHERE type = 'table' AND name = 'conversation_deliveries';"
	"PRAGMA writable_schema = RESET;",

	/* 9: agents (team): the membership probe (hd_team_member_check) that
	 * every peer post, claim and message makes read the id's unique index,
	 * then the table row for its team: two b-tree searches on the path
	 * of every post. This index answers it alone, in one.
	 * Agents change rarely; a status update leaves it untouched. */
	"CREATE INDEX agents_member ON agents(id, team_id);",

	/* 10: agents (team): a team's agents in id order straight from the
	 * index, so listing a team (every exchange reads its roster twice:
	 * the pre-checks and the leader's team state) needs no sort; the
	 * same index answers the membership probe alone, so agents_member
	 * goes. */
	"DROP INDEX agents_member;"
	"DROP INDEX agents_team;"
	"CREATE INDEX agents_team ON agents(team_id, id);",

	/* 11: conversation_deliveries (conversation): the room post that
	 * carries a delivery's text (the user's message, or the reply that
	 * mentioned the agent), so the delivery's prompt, whose room section
	 * and request would both say it, says it once, as the request. NULL
	 * for deliveries made before. */
	"ALTER TABLE conversation_deliveries ADD COLUMN post_seq INTEGER;",

	/* 12: autorun. teams (team) gains its settings: on or off, paused by
	 * hand, each agent's turns per hour and how many turns in a row
	 * without progress park it. The supervisor (src/engine/) owns the
	 * rest: wakes, one row per thing an agent should act on (UNIQUE per
	 * agent and key, so a stimulus seen twice wakes once);
	 * autorun_turns, one row per turn it ran (at most one running per
	 * agent, across processes, by the partial unique index); and
	 * autorun_agents, each agent's no-progress streak, its park and
	 * the messages an aborted turn had delivered. */
	"ALTER TABLE teams ADD COLUMN autorun INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE teams ADD COLUMN autorun_paused INTEGER NOT NULL"
	"  DEFAULT 0;"
	"ALTER TABLE teams ADD COLUMN turns_per_hour INTEGER NOT NULL"
	"  DEFAULT 30;"
	"ALTER TABLE teams ADD COLUMN park_after INTEGER NOT NULL DEFAULT 3;"
	"CREATE TABLE wakes ("
	"  id INTEGER PRIMARY KEY,"
	"  team_id TEXT NOT NULL,"
	"  agent_id TEXT NOT NULL,"
	"  reason TEXT NOT NULL,"
	"  ref INTEGER,"
	"  key TEXT NOT NULL,"
	"  note TEXT,"
	"  status TEXT NOT NULL DEFAULT 'queued' CHECK (status = 'queued' OR"
	"    status = 'running' OR status = 'done' OR status = 'dropped'),"
	"  turn_id INTEGER,"
	"  created_at INTEGER NOT NULL,"
	"  UNIQUE (agent_id, key)"
	");"
	"CREATE INDEX wakes_open ON wakes(agent_id, id)"
	"  WHERE status = 'queued' OR status = 'running';"
	"CREATE INDEX wakes_team ON wakes(team_id);"
	"CREATE TABLE autorun_turns ("
	"  id INTEGER PRIMARY KEY,"
	"  team_id TEXT NOT NULL,"
	"  agent_id TEXT NOT NULL,"
	"  status TEXT NOT NULL CHECK (status = 'running' OR status = 'done'"
	"    OR status = 'failed' OR status = 'aborted'),"
	"  owner TEXT,"
	"  owner_pid INTEGER,"
	"  owner_start INTEGER,"
	"  reasons TEXT NOT NULL,"
	"  start_seq INTEGER NOT NULL,"
	"  post_seq INTEGER,"
	"  progress INTEGER,"
	"  error TEXT,"
	"  delivered TEXT,"
	"  started_at INTEGER NOT NULL,"
	"  finished_at INTEGER"
	");"
	"CREATE UNIQUE INDEX autorun_turns_running ON autorun_turns(agent_id)"
	"  WHERE status = 'running';"
	"CREATE INDEX autorun_turns_agent ON autorun_turns(agent_id, id);"
	"CREATE INDEX autorun_turns_team ON autorun_turns(team_id);"
	"CREATE TABLE autorun_agents ("
	"  agent_id TEXT PRIMARY KEY,"
	"  team_id TEXT NOT NULL,"
	"  streak INTEGER NOT NULL DEFAULT 0,"
	"  parked TEXT,"
	"  parked_at INTEGER,"
	"  carry TEXT"
	");",

	/* 13: member activity (team). agents gains why it is in `error`
	 * (status_reason, NULL otherwise), how deep in a spawn chain it was
	 * spawned (spawn_depth: 0 for a member of the team file, its
	 * spawner's + 1 for a spawned one), how many turns of it run (turns:
	 * engines may overlap) and since when (turn_at, NULL in none), so a
	 * member that finishes its last task mid-turn stays `working` until
	 * the turn ends. teams gains how deep a spawn chain may go
	 * (max_spawn_depth). */
	"ALTER TABLE agents ADD COLUMN status_reason TEXT;"
	"ALTER TABLE agents ADD COLUMN spawn_depth INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE agents ADD COLUMN turns INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE agents ADD COLUMN turn_at INTEGER;"
	"ALTER TABLE teams ADD COLUMN max_spawn_depth INTEGER NOT NULL"
	"  DEFAULT 5;",

	/* 14: subtasks and files. tasks (board) gains its parent (NULL: a
	 * root task), indexed to list a parent's children; teams (team)
	 * gains the board's runaway caps: children per parent, nesting
	 * depth, and new root tasks per agent within a window of seconds.
	 * conversation_files (conversation) keeps what a reply attached (a
	 * [send_file: path] tag, or the full text of an answer too long to
	 * deliver whole): the bytes themselves, so the answer stays what it
	 * was whatever happens to the file. */
	"ALTER TABLE tasks ADD COLUMN parent_id INTEGER REFERENCES tasks(id);"
	"CREATE INDEX tasks_parent ON tasks(parent_id) WHERE parent_id IS NOT"
	"  NULL;"
	"ALTER TABLE teams ADD COLUMN max_children INTEGER NOT NULL"
	"  DEFAULT 24;"
	"ALTER TABLE teams ADD COLUMN max_task_depth INTEGER NOT NULL"
	"  DEFAULT 2;"
	"ALTER TABLE teams ADD COLUMN max_new_roots INTEGER NOT NULL"
	"  DEFAULT 30;"
	"ALTER TABLE teams ADD COLUMN new_roots_window_s INTEGER NOT NULL"
	"  DEFAULT 300;"
	"CREATE TABLE conversation_files ("
	"  id INTEGER PRIMARY KEY,"
	"  conversation_id TEXT NOT NULL"
	"    REFERENCES conversations(id) ON DELETE CASCADE,"
	"  seq INTEGER NOT NULL,"
	"  agent TEXT NOT NULL,"
	"  name TEXT NOT NULL,"
	"  media_type TEXT NOT NULL,"
	"  size INTEGER NOT NULL,"
	"  content BLOB NOT NULL,"
	"  created_at INTEGER NOT NULL"
	");"
	"CREATE INDEX conversation_files_conv ON"
	"  conversation_files(conversation_id, seq);",

	/* 15: cancel (conversation/cancel_requests.c; engine/cancel.c acts
	 * on it). cancel_requests holds each request
	 * to stop running work, made from any process: a conversation (target
	 * its id) or an exchange (target the room lock's holder, so a request
	 * never reaches the room's next exchange); the engine that runs it
	 * polls for it. A conversation may end `cancelled`, and its messages
	 * still queued or running then end `cancelled` too: the CHECKs gain
	 * the name, spelled as migration 8 left them. */
	"CREATE TABLE cancel_requests ("
	"  kind TEXT NOT NULL"
	"    CHECK (kind = 'conversation' OR kind = 'exchange'),"
	"  target TEXT NOT NULL,"
	"  team_id TEXT NOT NULL,"
	"  requested_by TEXT,"
	"  requested_at INTEGER NOT NULL,"
	"  PRIMARY KEY (kind, target)"
	");"
	"PRAGMA writable_schema = ON;"
	"UPDATE sqlite_master SET sql = replace(sql, 'CHECK (status = "
	"''running'' OR status = ''completed'' OR status = "
	"''failed'')', 'CHECK (status = ''running'' OR status = "
	"''completed'' OR status = ''failed'' OR status = "
	"''cancelled'')') WHERE type = 'table' AND name = "
	"'conversations';"
	"UPDATE sqlite_master SET sql = replace(sql, 'CHECK (state = "
	"''queued'' OR state = ''running'' OR state = ''done'')', "
	"'CHECK (state = ''queued'' OR state = ''running'' OR state = "
	"''done'' OR state = ''cancelled'')') WHERE type = 'table' AND "
	"name = 'conversation_deliveries';"
	"PRAGMA writable_schema = RESET;",

	/* 16: crashes (issue 24). room_locks (room/lock.c) gains who holds
	 * it on which machine: the host, the boot and the holder's process
	 * start time, so a holder on this host whose process is gone is
	 * taken over at once; the process group of the turn it runs
	 * (run_pid, run_start: its leader's pid and start time), killed
	 * before the turn runs again; and the exchange's progress as of its
	 * last commit (JSON), from which the same exchange, run again,
	 * resumes. conversation_deliveries (conversation) and autorun_turns
	 * (the supervisor) gain the same record of a running delivery's or
	 * turn's process. */
	"ALTER TABLE room_locks ADD COLUMN host TEXT;"
	"ALTER TABLE room_locks ADD COLUMN boot_id TEXT;"
	"ALTER TABLE room_locks ADD COLUMN start INTEGER;"
	"ALTER TABLE room_locks ADD COLUMN run_pid INTEGER;"
	"ALTER TABLE room_locks ADD COLUMN run_start INTEGER;"
	"ALTER TABLE room_locks ADD COLUMN progress TEXT;"
	"ALTER TABLE conversation_deliveries ADD COLUMN run_host TEXT;"
	"ALTER TABLE conversation_deliveries ADD COLUMN run_boot TEXT;"
	"ALTER TABLE conversation_deliveries ADD COLUMN run_pid INTEGER;"
	"ALTER TABLE conversation_deliveries ADD COLUMN run_start INTEGER;"
	"ALTER TABLE autorun_turns ADD COLUMN run_host TEXT;"
	"ALTER TABLE autorun_turns ADD COLUMN run_boot TEXT;"
	"ALTER TABLE autorun_turns ADD COLUMN run_pid INTEGER;"
	"ALTER TABLE autorun_turns ADD COLUMN run_start INTEGER;",

	/* 17: team memory (memory). memory_facts holds each fact: the team
	 * it was saved in, its scope (team, global, or agent: agent_id's
	 * own), its tags as " a b " (each a slug, so a tag filter is one
	 * instr), who saved it and from which task, and when it expires;
	 * an id is never reused, so a forgotten fact's id names no other.
	 * memory_fts is its FTS5 index over text and tags (external
	 * content: the text lives once, in memory_facts), kept by the
	 * triggers in the transaction that writes the fact; facts are never
	 * updated, only inserted and deleted. */
	"CREATE TABLE memory_facts ("
	"  id INTEGER PRIMARY KEY AUTOINCREMENT,"
	"  team_id TEXT NOT NULL,"
	"  scope TEXT NOT NULL"
	"    CHECK (scope IN ('team', 'global', 'agent')),"
	"  agent_id TEXT,"
	"  text TEXT NOT NULL,"
	"  tags TEXT NOT NULL DEFAULT ' ',"
	"  source_agent TEXT NOT NULL,"
	"  source_task INTEGER,"
	"  created_at INTEGER NOT NULL,"
	"  expires_at INTEGER,"
	"  CHECK ((scope = 'agent') = (agent_id IS NOT NULL))"
	");"
	"CREATE INDEX memory_facts_team ON memory_facts(team_id, id);"
	"CREATE INDEX memory_facts_global ON memory_facts(id)"
	"  WHERE scope = 'global';"
	"CREATE VIRTUAL TABLE memory_fts USING fts5(text, tags,"
	"  content = 'memory_facts', content_rowid = 'id');"
	"CREATE TRIGGER memory_facts_ai AFTER INSERT ON memory_facts BEGIN"
	"  INSERT INTO memory_fts(rowid, text, tags)"
	"    VALUES (new.id, new.text, new.tags);"
	"END;"
	"CREATE TRIGGER memory_facts_ad AFTER DELETE ON memory_facts BEGIN"
	"  INSERT INTO memory_fts(memory_fts, rowid, text, tags)"
	"    VALUES ('delete', old.id, old.text, old.tags);"
	"END;",

	/* 18: routines (routine/): a team's recurring tasks. next_fire_at
	 * is the stored next fire (NULL: disabled or never), what the due
	 * scan ranges over and what a fire's claim is conditional on. */
	"CREATE TABLE routines ("
	"  id INTEGER PRIMARY KEY AUTOINCREMENT,"
	"  team_id TEXT NOT NULL,"
	"  name TEXT NOT NULL,"
	"  agent TEXT NOT NULL,"
	"  cron TEXT,"
	"  tz TEXT,"
	"  every_s INTEGER NOT NULL DEFAULT 0,"
	"  title TEXT NOT NULL,"
	"  description TEXT NOT NULL DEFAULT '',"
	"  priority INTEGER NOT NULL DEFAULT 0,"
	"  enabled INTEGER NOT NULL DEFAULT 1,"
	"  created_at INTEGER NOT NULL,"
	"  updated_at INTEGER NOT NULL,"
	"  next_fire_at INTEGER,"
	"  last_fire_at INTEGER,"
	"  last_task_id INTEGER,"
	"  fires INTEGER NOT NULL DEFAULT 0,"
	"  UNIQUE (team_id, name)"
	");"
	"CREATE INDEX routines_due ON routines(next_fire_at) WHERE enabled = 1;",

	/* 19: events (events): a team's cost events by time, for the spend
	 * read (hd_events_costs). Partial: only cost rows are in it, so the
	 * appends of every other kind write no more pages than before
	 * (migration 7's reason to drop events_team). */
	"CREATE INDEX events_cost ON events(team_id, ts) WHERE kind = 'cost';",

	/* 20: verification (board/verify.c). tasks gains the status
	 * verifying (the CHECK's text edited as in 8: rows untouched); a
	 * task's verification spec and the state of its latest run live in
	 * task_verify, one row per task that has one: its gate (a shell
	 * command run in workdir) and critic (an agent of the team), the
	 * run's state (idle until the task is completed; queued; running,
	 * with the runner's token, pid and start time; failed, with the
	 * error), how many runs, the gate's exit and output, the verdict. */
	"PRAGMA writable_schema = ON;"
	"UPDATE sqlite_master SET sql = replace(sql, 'OR status = "
	"''cancelled'')', 'OR status = ''cancelled'' OR status = "
	"''verifying'')') WHERE type = 'table' AND name = 'tasks';"
	"PRAGMA writable_schema = RESET;"
	"CREATE TABLE task_verify ("
	"  task_id INTEGER PRIMARY KEY REFERENCES tasks(id) ON DELETE CASCADE,"
	"  gate TEXT,"
	"  workdir TEXT,"
	"  gate_timeout_s INTEGER NOT NULL DEFAULT 600,"
	"  critic TEXT,"
	"  critic_timeout_s INTEGER NOT NULL DEFAULT 900,"
	"  state TEXT NOT NULL DEFAULT 'idle' CHECK (state = 'idle' OR"
	"    state = 'queued' OR state = 'running' OR state = 'failed'),"
	"  attempts INTEGER NOT NULL DEFAULT 0,"
	"  runner TEXT,"
	"  runner_pid INTEGER,"
	"  runner_start INTEGER,"
	"  started_at INTEGER,"
	"  gate_exit INTEGER,"
	"  gate_output TEXT,"
	"  error TEXT,"
	"  verdict TEXT,"
	"  verdict_by TEXT,"
	"  reasons TEXT,"
	"  updated_at INTEGER NOT NULL"
	");"
	"CREATE INDEX task_verify_open ON task_verify(state)"
	"  WHERE state = 'queued' OR state = 'running';",
	/* 21: a critic given as a runtime (board/verify.c): critic_runtime
	 * and critic_config (its runtime_config, JSON text) instead of a
	 * member; run_critic, the throwaway member the verifier made for
	 * the current run (until it is removed). */
	"ALTER TABLE task_verify ADD COLUMN critic_runtime TEXT;"
	"ALTER TABLE task_verify ADD COLUMN critic_config TEXT;"
	"ALTER TABLE task_verify ADD COLUMN run_critic TEXT;",

	/* 22: the room's seq counter (room; issue 16). room_seqs holds each
	 * team's room head: the seq of its last post. A post takes its seq
	 * by one upsert of the row in the post's own transaction instead of
	 * reading MAX(seq) + 1, which is safe only under SQLite's one
	 * writer. Filled from the posts there are, so the next post of
	 * every room follows its last. WITHOUT ROWID: the key is the row,
	 * one b-tree searched and written per post instead of two. */
	"CREATE TABLE room_seqs ("
	"  team_id TEXT PRIMARY KEY,"
	"  seq INTEGER NOT NULL"
	") WITHOUT ROWID;"
	"INSERT INTO room_seqs(team_id, seq)"
	"  SELECT team_id, MAX(seq) FROM team_chat GROUP BY team_id;",
};

const int hd_store_nmigrations =
    (int)(sizeof(hd_store_migrations) / sizeof(hd_store_migrations[0]));
