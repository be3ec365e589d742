/*
 * The schema, one migration per version. A migration is only ever appended:
 * a database written by version N opens in every later version, and one
 * written by a later version is refused by an older binary.
 *
 * Raw rows (processes, metrics, process_lines, process_output) are written
 * as they happen; derived figures (the summary columns of comparisons,
 * pair_gains, comparison_notes, processes.valid) are written by the rule
 * from those rows and can be recomputed from them at any time.
 */
#include "db-internal.h"

static const char schema_v1[] =
	"CREATE TABLE artifacts ("
	"  id INTEGER PRIMARY KEY,"
	"  path TEXT NOT NULL,"
	"  size INTEGER NOT NULL,"
	"  sha256 TEXT NOT NULL,"
	"  UNIQUE (path, size, sha256));"
	"CREATE TABLE comparisons ("
	"  id INTEGER PRIMARY KEY,"
	"  created_at TEXT NOT NULL,"
	"  finished_at TEXT,"
	"  state TEXT NOT NULL CHECK (state IN ('running', 'done', 'abandoned')),"
	"  rule TEXT NOT NULL,"
	"  case_name TEXT NOT NULL,"
	"  metric_requested TEXT,"
	"  metric TEXT,"
	"  host TEXT NOT NULL,"
	"  fingerprint TEXT,"
	"  old_artifact INTEGER NOT NULL REFERENCES artifacts (id),"
	"  new_artifact INTEGER NOT NULL REFERENCES artifacts (id),"
	"  pairs INTEGER NOT NULL,"
	"  warmup INTEGER NOT NULL,"
	"  timeout_s REAL NOT NULL,"
	"  min_effect REAL NOT NULL,"
	"  noise REAL NOT NULL,"
	"  args TEXT NOT NULL,"
	"  verdict TEXT,"
	"  gain_median REAL, gain_min REAL, gain_max REAL,"
	"  old_median REAL, old_min REAL, old_max REAL, old_spread REAL,"
	"  new_median REAL, new_min REAL, new_max REAL, new_spread REAL,"
	"  digests_equal INTEGER);"
	"CREATE INDEX comparisons_host_case ON comparisons (host, case_name);"
	"CREATE TABLE comparison_notes ("
	"  comparison_id INTEGER NOT NULL REFERENCES comparisons (id),"
	"  kind TEXT NOT NULL CHECK (kind IN ('flag', 'reason')),"
	"  idx INTEGER NOT NULL,"
	"  text TEXT NOT NULL,"
	"  PRIMARY KEY (comparison_id, kind, idx)) WITHOUT ROWID;"
	"CREATE TABLE pair_gains ("
	"  comparison_id INTEGER NOT NULL REFERENCES comparisons (id),"
	"  pair INTEGER NOT NULL,"
	"  gain REAL,"
	"  PRIMARY KEY (comparison_id, pair)) WITHOUT ROWID;"
	"CREATE TABLE processes ("
	"  id INTEGER PRIMARY KEY,"
	"  comparison_id INTEGER NOT NULL REFERENCES comparisons (id),"
	"  seq INTEGER NOT NULL,"
	"  arm TEXT NOT NULL CHECK (arm IN ('old', 'new')),"
	"  pair INTEGER NOT NULL,"
	"  warmup INTEGER NOT NULL,"
	"  state TEXT NOT NULL CHECK (state IN ('running', 'done', 'abandoned')),"
	"  started_at TEXT NOT NULL,"
	"  ended_at TEXT,"
	"  exit_code INTEGER,"
	"  signal INTEGER,"
	"  timed_out INTEGER,"
	"  spawn_error TEXT,"
	"  wall_ms REAL, user_ms REAL, sys_ms REAL,"
	"  maxrss_kb INTEGER,"
	"  cpus TEXT,"
	"  digest TEXT,"
	"  record_valid INTEGER,"
	"  stdout_bytes INTEGER,"
	"  stderr_bytes INTEGER,"
	"  fault TEXT,"
	"  fault_watch TEXT,"
	"  valid INTEGER,"
	"  invalid_reason TEXT,"
	"  UNIQUE (comparison_id, seq));"
	"CREATE TABLE metrics ("
	"  process_id INTEGER NOT NULL REFERENCES processes (id),"
	"  name TEXT NOT NULL,"
	"  value REAL,"
	"  PRIMARY KEY (process_id, name)) WITHOUT ROWID;"
	"CREATE TABLE process_lines ("
	"  process_id INTEGER NOT NULL REFERENCES processes (id),"
	"  idx INTEGER NOT NULL,"
	"  kind TEXT NOT NULL CHECK (kind IN ('RESULT', 'SUMMARY', 'error')),"
	"  text TEXT NOT NULL,"
	"  PRIMARY KEY (process_id, idx)) WITHOUT ROWID;"
	"CREATE TABLE hosts ("
	"  name TEXT PRIMARY KEY,"
	"  quarantined INTEGER NOT NULL DEFAULT 0,"
	"  fault TEXT,"
	"  since TEXT,"
	"  comparison_id INTEGER,"
	"  seq INTEGER,"
	"  cleared_at TEXT);"
	"CREATE TABLE process_output ("
	"  process_id INTEGER PRIMARY KEY REFERENCES processes (id),"
	"  stdout BLOB,"
	"  stderr BLOB);";

/* Version 2: the agent. Heads seen, jobs (one per new head commit), builds
 * with their artifacts and logs, contract runner results, and the tie of a
 * comparison to its job and builds. */
static const char schema_v2[] =
	"CREATE TABLE heads ("
	"  name TEXT PRIMARY KEY,"
	"  oid TEXT NOT NULL,"
	"  is_pull INTEGER NOT NULL,"
	"  seen_at TEXT NOT NULL);"
	"CREATE TABLE jobs ("
	"  id INTEGER PRIMARY KEY,"
	"  head TEXT NOT NULL,"
	"  commit_oid TEXT NOT NULL,"
	"  base_oid TEXT,"
	"  subject TEXT,"
	"  state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),"
	"  detail TEXT,"
	"  created_at TEXT NOT NULL,"
	"  started_at TEXT,"
	"  finished_at TEXT,"
	"  UNIQUE (head, commit_oid));"
	"CREATE TABLE builds ("
	"  id INTEGER PRIMARY KEY,"
	"  host TEXT NOT NULL,"
	"  commit_oid TEXT NOT NULL,"
	"  tree_oid TEXT NOT NULL,"
	"  recipe_hash TEXT NOT NULL,"
	"  state TEXT NOT NULL CHECK (state IN ('running', 'done', 'failed', 'abandoned')),"
	"  dir TEXT NOT NULL,"
	"  started_at TEXT NOT NULL,"
	"  finished_at TEXT,"
	"  exit_code INTEGER, signal INTEGER, timed_out INTEGER,"
	"  wall_ms REAL,"
	"  log BLOB,"
	"  log_bytes INTEGER,"
	"  toolchain TEXT,"
	"  fingerprint TEXT,"
	"  detail TEXT);"
	"CREATE INDEX builds_key ON builds (host, tree_oid, recipe_hash);"
	"CREATE TABLE build_artifacts ("
	"  build_id INTEGER NOT NULL REFERENCES builds (id),"
	"  name TEXT NOT NULL,"
	"  artifact_id INTEGER NOT NULL REFERENCES artifacts (id),"
	"  PRIMARY KEY (build_id, name)) WITHOUT ROWID;"
	"CREATE TABLE runner_results ("
	"  id INTEGER PRIMARY KEY,"
	"  build_id INTEGER NOT NULL REFERENCES builds (id),"
	"  runner TEXT NOT NULL,"
	"  chunk INTEGER NOT NULL,"
	"  chunks INTEGER NOT NULL,"
	"  state TEXT NOT NULL CHECK (state IN ('running', 'done', 'abandoned')),"
	"  binary_sha256 TEXT,"
	"  started_at TEXT NOT NULL,"
	"  ended_at TEXT,"
	"  exit_code INTEGER, signal INTEGER, timed_out INTEGER,"
	"  elapsed_ms REAL,"
	"  spawn_error TEXT,"
	"  output BLOB);"
	"CREATE INDEX runner_results_build ON runner_results (build_id, runner, chunk);"
	"CREATE TABLE runner_lines ("
	"  result_id INTEGER NOT NULL REFERENCES runner_results (id),"
	"  idx INTEGER NOT NULL,"
	"  kind TEXT NOT NULL,"
	"  text TEXT NOT NULL,"
	"  PRIMARY KEY (result_id, idx)) WITHOUT ROWID;"
	"ALTER TABLE comparisons ADD COLUMN job_id INTEGER REFERENCES jobs (id);"
	"ALTER TABLE comparisons ADD COLUMN base_build INTEGER REFERENCES builds (id);"
	"ALTER TABLE comparisons ADD COLUMN head_build INTEGER REFERENCES builds (id);"
	"CREATE INDEX comparisons_job ON comparisons (job_id, case_name);";

/* Version 3: indexes for the hub's filters (db_comparison_find in
 * db/comparisons.c, db_host_infos in db/hosts.c). An index holds the
 * rowid after its columns, so comparisons_host serves "host = ? ORDER BY id
 * DESC" and the existing comparisons_host_case already serves host and case
 * in id order; verdict and commit filters, and a build's host, get theirs. */
static const char schema_v3[] =
	"CREATE INDEX comparisons_host ON comparisons (host);"
	"CREATE INDEX comparisons_verdict ON comparisons (verdict);"
	"CREATE INDEX jobs_commit ON jobs (commit_oid);"
	"CREATE INDEX builds_host ON builds (host);";

/* Version 4: what perfd said on a pull request's host (web/pulls.c): its
 * comment per pull request, the commit statuses it set, the heads of pull
 * requests a maintainer approved with "/perfd run", and when perfd first
 * saw each head that waits for approval. */
static const char schema_v4[] =
	"CREATE TABLE pull_comments ("
	"  repo TEXT NOT NULL,"
	"  pr INTEGER NOT NULL,"
	"  comment_key TEXT NOT NULL DEFAULT '',"
	"  comment_id INTEGER,"
	"  commit_oid TEXT,"
	"  body_sha256 TEXT,"
	"  recreated INTEGER NOT NULL DEFAULT 0,"
	"  muted INTEGER NOT NULL DEFAULT 0,"
	"  posted_at TEXT NOT NULL,"
	"  PRIMARY KEY (repo, pr, comment_key)) WITHOUT ROWID;"
	"CREATE TABLE commit_statuses ("
	"  repo TEXT NOT NULL,"
	"  commit_oid TEXT NOT NULL,"
	"  context TEXT NOT NULL,"
	"  state TEXT NOT NULL,"
	"  description TEXT NOT NULL,"
	"  target_url TEXT,"
	"  posted_at TEXT NOT NULL,"
	"  PRIMARY KEY (repo, commit_oid, context)) WITHOUT ROWID;"
	"CREATE TABLE pull_approvals ("
	"  repo TEXT NOT NULL,"
	"  pr INTEGER NOT NULL,"
	"  commit_oid TEXT NOT NULL,"
	"  approver TEXT NOT NULL,"
	"  comment_id INTEGER NOT NULL,"
	"  approved_at TEXT NOT NULL,"
	"  PRIMARY KEY (repo, pr, commit_oid)) WITHOUT ROWID;"
	"CREATE TABLE pull_heads_seen ("
	"  repo TEXT NOT NULL,"
	"  pr INTEGER NOT NULL,"
	"  commit_oid TEXT NOT NULL,"
	"  first_seen INTEGER NOT NULL,"
	"  PRIMARY KEY (repo, pr, commit_oid)) WITHOUT ROWID;";

/* Version 5: pairs-median/2 (docs/rule.md). A comparison's kind (an A/A
 * compares one build with itself and calibrates the host), the direction
 * that is better, the most pairs its stages may reach, the A/A comparisons
 * whose pair gains calibrate it (a JSON array of ids, fixed when it starts),
 * each arm's manifest (the sha256 over its build's commit, tree, recipe and
 * every artifact, or over a perfd pair's programs and named files), and the
 * derived judgement of each stage. */
static const char schema_v5[] =
	"ALTER TABLE comparisons ADD COLUMN kind TEXT NOT NULL DEFAULT 'compare'"
	"  CHECK (kind IN ('compare', 'aa'));"
	"ALTER TABLE comparisons ADD COLUMN better TEXT NOT NULL DEFAULT 'lower'"
	"  CHECK (better IN ('lower', 'higher'));"
	"ALTER TABLE comparisons ADD COLUMN max_pairs INTEGER;"
	"ALTER TABLE comparisons ADD COLUMN calibration TEXT;"
	"ALTER TABLE comparisons ADD COLUMN old_manifest TEXT;"
	"ALTER TABLE comparisons ADD COLUMN new_manifest TEXT;"
	"ALTER TABLE comparisons ADD COLUMN pairs_run INTEGER;"
	"CREATE INDEX comparisons_kind ON comparisons (host, case_name, kind);"
	"CREATE TABLE comparison_stages ("
	"  comparison_id INTEGER NOT NULL REFERENCES comparisons (id),"
	"  stage INTEGER NOT NULL,"
	"  pairs INTEGER NOT NULL,"
	"  test TEXT NOT NULL,"
	"  calibration_gains INTEGER NOT NULL,"
	"  alpha REAL NOT NULL,"
	"  p_faster REAL, p_slower REAL, p_below REAL, p_above REAL,"
	"  verdict TEXT NOT NULL,"
	"  PRIMARY KEY (comparison_id, stage)) WITHOUT ROWID;"
	"CREATE TABLE manifests ("
	"  hash TEXT PRIMARY KEY,"
	"  build_id INTEGER REFERENCES builds (id),"
	"  commit_oid TEXT,"
	"  tree_oid TEXT,"
	"  recipe_hash TEXT,"
	"  created_at TEXT NOT NULL);"
	"CREATE TABLE manifest_files ("
	"  manifest TEXT NOT NULL REFERENCES manifests (hash),"
	"  name TEXT NOT NULL,"
	"  size INTEGER NOT NULL,"
	"  sha256 TEXT NOT NULL,"
	"  PRIMARY KEY (manifest, name)) WITHOUT ROWID;";

/* Version 6: the hub accepts writes (docs/hub.md). The tokens it issued,
 * each kept only as the sha256 of its text (a host's, for the agent that
 * pushes that host's records, or a maintainer's), and where each ingested
 * comparison came from: its host, its id there and the sha256 of the record
 * it came in, so that the same record again stores nothing and the same id
 * with other content is refused. */
static const char schema_v6[] =
	"CREATE TABLE tokens ("
	"  id INTEGER PRIMARY KEY,"
	"  kind TEXT NOT NULL CHECK (kind IN ('host', 'maintainer')),"
	"  name TEXT NOT NULL,"
	"  sha256 TEXT NOT NULL UNIQUE,"
	"  created_at TEXT NOT NULL,"
	"  revoked_at TEXT);"
	"CREATE INDEX tokens_name ON tokens (kind, name);"
	"CREATE TABLE comparison_origins ("
	"  host TEXT NOT NULL,"
	"  origin_id INTEGER NOT NULL,"
	"  comparison_id INTEGER NOT NULL UNIQUE REFERENCES comparisons (id),"
	"  sha256 TEXT NOT NULL,"
	"  received_at TEXT NOT NULL,"
	"  PRIMARY KEY (host, origin_id)) WITHOUT ROWID;";

/* Version 7: the agent's push (docs/hub.md). Per done comparison the hub
 * answered for: the answer's status (200 or 201: the hub has it; 409 or 422:
 * refused for good, with the hub's message), the hub's id for it, and when.
 * A done comparison with no row is the backlog. */
static const char schema_v7[] =
	"CREATE TABLE pushed ("
	"  comparison_id INTEGER PRIMARY KEY REFERENCES comparisons (id),"
	"  status INTEGER NOT NULL,"
	"  hub_id INTEGER,"
	"  message TEXT,"
	"  pushed_at TEXT NOT NULL);";

/* Version 8: the hub's many hosts (docs/hub.md). Jobs gain the host they
 * were made on ('' for this database's own agent), their id there and the
 * sequence number and sha256 of the update that set them; (host, head,
 * commit) is unique in place of (head, commit), which takes rebuilding the
 * table. An ingested comparison keeps its job's id on its host, so that a
 * job that arrives after its comparisons finds them. The agent numbers
 * every change of a job (seq) and keeps what the hub acknowledged of each
 * (pushed_jobs); the hub keeps each host's newest heartbeat (host_status)
 * and, per pull request head it saw, the base commit it fixed for it, how,
 * and whether the head is trusted and still its open pull request's head
 * (hub_pulls): what the agents build. */
static const char schema_v8[] =
	"CREATE TABLE jobs_v8 ("
	"  id INTEGER PRIMARY KEY,"
	"  host TEXT NOT NULL DEFAULT '',"
	"  head TEXT NOT NULL,"
	"  commit_oid TEXT NOT NULL,"
	"  base_oid TEXT,"
	"  subject TEXT,"
	"  state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),"
	"  detail TEXT,"
	"  created_at TEXT NOT NULL,"
	"  started_at TEXT,"
	"  finished_at TEXT,"
	"  origin_id INTEGER,"
	"  seq INTEGER NOT NULL DEFAULT 0,"
	"  sha256 TEXT,"
	"  UNIQUE (host, head, commit_oid));"
	"INSERT INTO jobs_v8 (id, head, commit_oid, base_oid, subject, state, detail, created_at,"
	"  started_at, finished_at, seq)"
	"  SELECT id, head, commit_oid, base_oid, subject, state, detail, created_at, started_at,"
	"  finished_at, id FROM jobs;"
	"DROP TABLE jobs;"
	"ALTER TABLE jobs_v8 RENAME TO jobs;"
	"CREATE INDEX jobs_commit ON jobs (commit_oid);"
	"CREATE INDEX jobs_seq ON jobs (seq);"
	"CREATE UNIQUE INDEX jobs_origin ON jobs (host, origin_id) WHERE origin_id IS NOT NULL;"
	"ALTER TABLE comparison_origins ADD COLUMN origin_job INTEGER;"
	"CREATE INDEX comparison_origins_job ON comparison_origins (host, origin_job)"
	"  WHERE origin_job IS NOT NULL;"
	"CREATE TABLE pushed_jobs ("
	"  job_id INTEGER PRIMARY KEY REFERENCES jobs (id),"
	"  seq INTEGER NOT NULL,"
	"  status INTEGER NOT NULL,"
	"  message TEXT,"
	"  pushed_at TEXT NOT NULL);"
	"CREATE TABLE host_status ("
	"  host TEXT PRIMARY KEY,"
	"  seq INTEGER NOT NULL,"
	"  sent_at TEXT NOT NULL,"
	"  received_at TEXT NOT NULL,"
	"  state TEXT NOT NULL,"
	"  job_origin INTEGER,"
	"  backlog INTEGER NOT NULL,"
	"  fingerprint TEXT,"
	"  quarantined INTEGER NOT NULL,"
	"  fault TEXT);"
	"CREATE TABLE hub_pulls ("
	"  repo TEXT NOT NULL,"
	"  pr INTEGER NOT NULL,"
	"  commit_oid TEXT NOT NULL,"
	"  base_oid TEXT NOT NULL,"
	"  base_ref TEXT NOT NULL,"
	"  how TEXT NOT NULL,"
	"  author TEXT NOT NULL,"
	"  trusted INTEGER NOT NULL,"
	"  open INTEGER NOT NULL,"
	"  fixed_at TEXT NOT NULL,"
	"  PRIMARY KEY (repo, pr, commit_oid)) WITHOUT ROWID;";

/* Version 9: receipts as answered (docs/api.md, "Receipts"). A done or
 * abandoned comparison's receipt, in one format ("json", "csv"), rendered
 * once and kept as its bytes with their sha256. Derived: db_receipt_forget
 * drops a comparison's rows whenever a write changes what its receipt
 * shows, and `renderer` names the renderer that wrote the bytes, so that a
 * row written by another one is never answered. Dropping every row loses
 * nothing. Self-contained: it names only comparisons. */
static const char schema_v9[] =
	"CREATE TABLE receipts ("
	"  comparison_id INTEGER NOT NULL REFERENCES comparisons (id) ON DELETE CASCADE,"
	"  format TEXT NOT NULL,"
	"  renderer TEXT NOT NULL,"
	"  sha256 TEXT NOT NULL,"
	"  body BLOB NOT NULL,"
	"  PRIMARY KEY (comparison_id, format));";

/* Version 10: builds at the hub (docs/hub.md, "The build record"). A
 * build an agent pushed keeps its id on its host and the sha256 of its
 * record without its runner results (which a later record may add to); a
 * runner result its id there; an ingested comparison its builds' ids on its
 * host, so that a build that arrives after its comparisons finds them. The
 * agent keeps how many runner results of each build the hub acknowledged
 * (pushed_builds). */
static const char schema_v10[] =
	"ALTER TABLE builds ADD COLUMN origin_id INTEGER;"
	"ALTER TABLE builds ADD COLUMN sha256 TEXT;"
	"CREATE UNIQUE INDEX builds_origin ON builds (host, origin_id) WHERE origin_id IS NOT NULL;"
	"ALTER TABLE runner_results ADD COLUMN origin_id INTEGER;"
	"ALTER TABLE comparison_origins ADD COLUMN origin_base_build INTEGER;"
	"ALTER TABLE comparison_origins ADD COLUMN origin_head_build INTEGER;"
	"CREATE TABLE pushed_builds ("
	"  build_id INTEGER PRIMARY KEY REFERENCES builds (id),"
	"  results INTEGER NOT NULL,"
	"  status INTEGER NOT NULL,"
	"  message TEXT,"
	"  pushed_at TEXT NOT NULL);";

/* Version 11: rows left running (docs/ARCHITECTURE.md, "Rows left
 * running"). A comparison, build or runner result names the process that
 * runs it while it runs (owner: pid, start time, pid namespace, boot; NULL
 * once it ends, and for a row ingested from elsewhere or written before
 * this version), so that the next writer to open the file marks abandoned
 * the rows of a process that is gone and leaves those of one that runs; an
 * abandoned comparison keeps why (abandoned_reason), which the rule names. */
static const char schema_v11[] =
	"ALTER TABLE comparisons ADD COLUMN owner TEXT;"
	"ALTER TABLE comparisons ADD COLUMN abandoned_reason TEXT;"
	"ALTER TABLE builds ADD COLUMN owner TEXT;"
	"ALTER TABLE runner_results ADD COLUMN owner TEXT;"
	"CREATE INDEX comparisons_running ON comparisons (state) WHERE state = 'running';";

/* Version 12: builds whose artifacts changed after they were hashed
 * (docs/security.md, "Evidence that cannot drift"): never used again, their
 * tree built anew; the build's row stays as the record of what it made. */
static const char schema_v12[] =
	"CREATE TABLE stale_builds ("
	"  build_id INTEGER PRIMARY KEY REFERENCES builds (id),"
	"  reason TEXT NOT NULL,"
	"  found_at TEXT NOT NULL);";

/* Version 13: history (docs/history.md). A job has a kind: 'head' (a
 * watched head at a new commit, as before), 'span' (a branch's head against
 * an older reference), 'confirm' (an alert's comparison repeated) or
 * 'bisect' (one end of a bisection step); a history job may name the one
 * case it compares (case_name) and the alert it serves (alert_id). judged
 * is 0 for a head or span job of this agent whose verdicts the history has
 * not yet read; rows made before this version count as read, so that an
 * upgrade raises no alert on old history. An alert is a range of a branch
 * (lo, hi] whose comparison on one host and case was slower or faster: it
 * is 'confirming' until a repeated comparison agrees ('raised') or not
 * ('dismissed'); a raised alert of more than one commit is bisected
 * (bisect_steps: per step the midpoint and the two jobs that compare it
 * against both ends; alert_findings: the commits or ranges found to carry
 * the change, each with its share). Triage (new, acknowledged, fixed,
 * false_alarm) is a person's word on a raised alert. */
static const char schema_v13[] =
	"ALTER TABLE jobs ADD COLUMN kind TEXT NOT NULL DEFAULT 'head'"
	"  CHECK (kind IN ('head', 'span', 'confirm', 'bisect'));"
	"ALTER TABLE jobs ADD COLUMN case_name TEXT;"
	"ALTER TABLE jobs ADD COLUMN alert_id INTEGER;"
	"ALTER TABLE jobs ADD COLUMN judged INTEGER NOT NULL DEFAULT 1;"
	"CREATE INDEX jobs_unjudged ON jobs (id) WHERE judged = 0;"
	"CREATE TABLE alerts ("
	"  id INTEGER PRIMARY KEY,"
	"  host TEXT NOT NULL,"
	"  branch TEXT NOT NULL,"
	"  case_name TEXT NOT NULL,"
	"  found_by TEXT NOT NULL CHECK (found_by IN ('head', 'span')),"
	"  lo_oid TEXT NOT NULL,"
	"  hi_oid TEXT NOT NULL,"
	"  commits INTEGER NOT NULL,"
	"  direction TEXT NOT NULL CHECK (direction IN ('slower', 'faster')),"
	"  gain REAL NOT NULL,"
	"  comparison_id INTEGER NOT NULL REFERENCES comparisons (id),"
	"  confirm_id INTEGER REFERENCES comparisons (id),"
	"  state TEXT NOT NULL CHECK (state IN ('confirming', 'raised', 'dismissed')),"
	"  bisect TEXT NOT NULL DEFAULT 'none'"
	"    CHECK (bisect IN ('none', 'running', 'done', 'budget')),"
	"  detail TEXT,"
	"  triage TEXT NOT NULL DEFAULT 'new'"
	"    CHECK (triage IN ('new', 'acknowledged', 'fixed', 'false_alarm')),"
	"  triage_by TEXT,"
	"  triage_at TEXT,"
	"  fixed_by INTEGER REFERENCES comparisons (id),"
	"  created_at TEXT NOT NULL,"
	"  updated_at TEXT NOT NULL,"
	"  UNIQUE (host, branch, case_name, found_by, lo_oid, hi_oid));"
	"CREATE TABLE bisect_steps ("
	"  alert_id INTEGER NOT NULL REFERENCES alerts (id),"
	"  step INTEGER NOT NULL,"
	"  lo_oid TEXT NOT NULL,"
	"  hi_oid TEXT NOT NULL,"
	"  mid_oid TEXT NOT NULL,"
	"  lo_job INTEGER NOT NULL REFERENCES jobs (id),"
	"  hi_job INTEGER NOT NULL REFERENCES jobs (id),"
	"  outcome TEXT CHECK (outcome IN ('lower', 'upper', 'both', 'neither', 'skipped')),"
	"  detail TEXT,"
	"  PRIMARY KEY (alert_id, step)) WITHOUT ROWID;"
	"CREATE TABLE alert_findings ("
	"  alert_id INTEGER NOT NULL REFERENCES alerts (id),"
	"  idx INTEGER NOT NULL,"
	"  what TEXT NOT NULL CHECK (what IN ('commit', 'range')),"
	"  lo_oid TEXT NOT NULL,"
	"  hi_oid TEXT NOT NULL,"
	"  commits INTEGER NOT NULL,"
	"  gain REAL,"
	"  comparison_id INTEGER REFERENCES comparisons (id),"
	"  note TEXT,"
	"  PRIMARY KEY (alert_id, idx)) WITHOUT ROWID;";

/* Version 14: alerts at the hub (docs/hub.md, "The alert record"). An
 * agent's alert takes the next of its alert sequence numbers (seq) at every
 * change, and pushed_alerts holds the hub's answer to each alert's newest
 * update (the alerts of an older file each get one, so they are sent); at
 * the hub an alert keeps its host's id (origin_id) and the seq and sha256
 * of the update that set it, and its triage, which no update touches. */
static const char schema_v14[] =
	"ALTER TABLE alerts ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE alerts ADD COLUMN origin_id INTEGER;"
	"ALTER TABLE alerts ADD COLUMN sha256 TEXT;"
	"UPDATE alerts SET seq = id WHERE host = '';"
	"CREATE UNIQUE INDEX alerts_origin ON alerts (host, origin_id)"
	"  WHERE origin_id IS NOT NULL;"
	"CREATE TABLE pushed_alerts ("
	"  alert_id INTEGER PRIMARY KEY REFERENCES alerts (id),"
	"  seq INTEGER NOT NULL,"
	"  status INTEGER NOT NULL,"
	"  message TEXT,"
	"  pushed_at TEXT NOT NULL);";

/* Version 15: forecasts a pull request stated before it was measured
 * (docs/comment.md, "Forecasts"). forecasts: per pull request, head commit
 * and source (its description, its head commit's message) each
 * perfd-expect line as written, with its case, direction and band
 * (fractions, as gains are stored), or the problem that kept it from being
 * read; first_seen is when perfd first read that line at that head.
 * forecast_reads: per source read, the sha256 of its perfd-expect lines,
 * so that a description edited after the head's first comparison is
 * noticed (changed_at) without being taken. */
static const char schema_v15[] =
	"CREATE TABLE forecasts ("
	"  repo TEXT NOT NULL,"
	"  pr INTEGER NOT NULL,"
	"  commit_oid TEXT NOT NULL,"
	"  source TEXT NOT NULL CHECK (source IN ('description', 'commit')),"
	"  idx INTEGER NOT NULL,"
	"  line TEXT NOT NULL,"
	"  case_name TEXT,"
	"  direction TEXT CHECK (direction IN ('faster', 'slower', 'unchanged')),"
	"  band_lo REAL,"
	"  band_hi REAL,"
	"  problem TEXT,"
	"  first_seen TEXT NOT NULL,"
	"  PRIMARY KEY (repo, pr, commit_oid, source, idx)) WITHOUT ROWID;"
	"CREATE INDEX forecasts_commit ON forecasts (commit_oid);"
	"CREATE TABLE forecast_reads ("
	"  repo TEXT NOT NULL,"
	"  pr INTEGER NOT NULL,"
	"  commit_oid TEXT NOT NULL,"
	"  source TEXT NOT NULL CHECK (source IN ('description', 'commit')),"
	"  lines_sha256 TEXT NOT NULL,"
	"  read_at TEXT NOT NULL,"
	"  changed_at TEXT,"
	"  PRIMARY KEY (repo, pr, commit_oid, source)) WITHOUT ROWID;";

/* Version 16: alerts on the forge (docs/github.md, "Alerts on the
 * forge"), per repository. alert_issues: the one issue the hub keeps for
 * a raised alert of its default branch: its number (0 until made; unsure
 * when a create was sent whose outcome is not known, so the hub looks for
 * it before sending another), the sha256 of the title and body sent last,
 * the state sent last, and how far its comments were read (the newest
 * comment's id and time, and when). alert_culprits: per culprit commit of
 * an alert, the pull request the forge said it came from (0: none) and
 * the comment the hub made there (0: not made). alert_commands: every
 * "/perfd triage" command read from an issue, by whom, and what came of
 * it: applied, refused (with why), ignored (its author may not triage) or
 * malformed (with why). */
static const char schema_v16[] =
	"CREATE TABLE alert_issues ("
	"  repo TEXT NOT NULL,"
	"  alert_id INTEGER NOT NULL REFERENCES alerts (id),"
	"  number INTEGER NOT NULL DEFAULT 0,"
	"  unsure INTEGER NOT NULL DEFAULT 0,"
	"  body_sha256 TEXT,"
	"  state TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'closed')),"
	"  comment_id INTEGER NOT NULL DEFAULT 0,"
	"  comments_since TEXT,"
	"  read_at TEXT,"
	"  posted_at TEXT NOT NULL,"
	"  PRIMARY KEY (repo, alert_id)) WITHOUT ROWID;"
	"CREATE TABLE alert_culprits ("
	"  repo TEXT NOT NULL,"
	"  alert_id INTEGER NOT NULL REFERENCES alerts (id),"
	"  commit_oid TEXT NOT NULL,"
	"  pr INTEGER NOT NULL DEFAULT 0,"
	"  comment_id INTEGER NOT NULL DEFAULT 0,"
	"  unsure INTEGER NOT NULL DEFAULT 0,"
	"  asked_at TEXT NOT NULL,"
	"  PRIMARY KEY (repo, alert_id, commit_oid)) WITHOUT ROWID;"
	"CREATE TABLE alert_commands ("
	"  repo TEXT NOT NULL,"
	"  comment_id INTEGER NOT NULL,"
	"  alert_id INTEGER NOT NULL REFERENCES alerts (id),"
	"  login TEXT NOT NULL,"
	"  command TEXT NOT NULL,"
	"  outcome TEXT NOT NULL CHECK (outcome IN ('applied', 'refused', 'ignored', 'malformed')),"
	"  detail TEXT,"
	"  read_at TEXT NOT NULL,"
	"  PRIMARY KEY (repo, comment_id)) WITHOUT ROWID;"
	"CREATE INDEX alert_commands_alert ON alert_commands (alert_id);";

/* Version 17: the sandbox each host's newest heartbeat names
 * (docs/hub.md, "The heartbeat"): its name ("bubblewrap"), or "none: " and
 * why its builds run unsandboxed; NULL where the agent did not say (one
 * older than this, or a heartbeat stored before it). */
static const char schema_v17[] =
	"ALTER TABLE host_status ADD COLUMN sandbox TEXT;";

/* Version 18: a hub's job says how many comparisons its host made of it
 * (the job record's "comparisons"; NULL: the record did not say), so that
 * its status waits for them all (docs/hub.md, "Statuses"). */
static const char schema_v18[] =
	"ALTER TABLE jobs ADD COLUMN comparisons INTEGER;";

/* Version 19: the time budget that set a comparison's max_pairs (NULL:
 * none did; docs/config.md, time_budget_s). */
static const char schema_v19[] =
	"ALTER TABLE comparisons ADD COLUMN time_budget_s REAL;";

/* Version 20: pairs-median/2.1 (docs/rule.md) runs both tests at each
 * stage and a scale gate before the calibrated one: a stage keeps the
 * calibrated test's four p values beside the sign test's (p_faster ..
 * p_above), the gate's p value and the ratio of the spreads it compared.
 * NULL in the rows of the earlier rules. */
static const char schema_v20[] =
	"ALTER TABLE comparison_stages ADD COLUMN cal_p_faster REAL;"
	"ALTER TABLE comparison_stages ADD COLUMN cal_p_slower REAL;"
	"ALTER TABLE comparison_stages ADD COLUMN cal_p_below REAL;"
	"ALTER TABLE comparison_stages ADD COLUMN cal_p_above REAL;"
	"ALTER TABLE comparison_stages ADD COLUMN gate_p REAL;"
	"ALTER TABLE comparison_stages ADD COLUMN spread_ratio REAL;";

/* Version 21: the machine's CPU pressure while a process ran (the time
 * some task waited for a CPU, Linux's PSI: the load it ran beside); NULL
 * for the rows before and where the kernel keeps none. A pairs-median/2.2
 * stage's load gate: its p value and how many processes lay above the
 * calibration's; NULL for the rows of earlier rules. */
static const char schema_v21[] =
	"ALTER TABLE processes ADD COLUMN cpu_wait_ms REAL;"
	"ALTER TABLE comparison_stages ADD COLUMN load_p REAL;"
	"ALTER TABLE comparison_stages ADD COLUMN load_above REAL;";

/* Version 22: holds (docs/hosts.md, "When the machine goes down"). A
 * commit held on a host: the machine went down while a step of it ran (a
 * row left running by an earlier boot on a host with a device), a process
 * of it outlived SIGKILL, a fault line came while it ran, or its change
 * touches the host profile's [gate] paths (held before its first run).
 * The step (build, runner, case or the whole job; its rows, the last
 * process started), the boot it
 * ran in, the times its rows name, the stuck process's state, the fault
 * line, and what the previous boot's kernel log said; released_at and released_by once a person released it. A job that
 * would run a held commit keeps the hold's id while it waits. */
static const char schema_v22[] =
	"CREATE TABLE holds ("
	"  id INTEGER PRIMARY KEY,"
	"  host TEXT NOT NULL,"
	"  why TEXT NOT NULL CHECK (why IN ('went-down', 'unkillable', 'fault', 'gate')),"
	"  step TEXT NOT NULL CHECK (step IN ('build', 'runner', 'case', 'job')),"
	"  name TEXT NOT NULL DEFAULT '',"
	"  commit_oid TEXT,"
	"  tree_oid TEXT,"
	"  recipe_hash TEXT,"
	"  job_id INTEGER,"
	"  build_id INTEGER,"
	"  result_id INTEGER,"
	"  comparison_id INTEGER,"
	"  seq INTEGER,"
	"  arm TEXT,"
	"  boot TEXT,"
	"  started_at TEXT,"
	"  last_at TEXT,"
	"  detail TEXT,"
	"  fault TEXT,"
	"  log_read TEXT,"
	"  created_at TEXT NOT NULL,"
	"  released_at TEXT,"
	"  released_by TEXT);"
	"CREATE INDEX holds_host ON holds (host, released_at);"
	"ALTER TABLE jobs ADD COLUMN hold_id INTEGER;";

/* v23: at the hub, the commits each host says it holds (its heartbeat's
 * holds), with the maintainer's green light that releases one, and the
 * kind of device each host is for. */
static const char schema_v23[] =
	"CREATE TABLE hub_holds ("
	"  host TEXT NOT NULL,"
	"  origin_id INTEGER NOT NULL,"
	"  why TEXT NOT NULL CHECK (why IN ('went-down', 'unkillable', 'fault', 'gate')),"
	"  step TEXT NOT NULL CHECK (step IN ('build', 'runner', 'case', 'job')),"
	"  commit_oid TEXT,"
	"  tree_oid TEXT,"
	"  since TEXT NOT NULL,"
	"  text TEXT NOT NULL,"
	"  first_seen TEXT NOT NULL,"
	"  in_force INTEGER NOT NULL DEFAULT 1,"
	"  greenlit_by TEXT,"
	"  greenlit_at TEXT,"
	"  greenlit_pr INTEGER,"
	"  greenlit_comment INTEGER,"
	"  PRIMARY KEY (host, origin_id));"
	"CREATE INDEX hub_holds_commit ON hub_holds (commit_oid, in_force);"
	"ALTER TABLE host_status ADD COLUMN kind TEXT;";

const struct db_migration db_migrations[] = {
	{ 1, schema_v1 },
	{ 2, schema_v2 },
	{ 3, schema_v3 },
	{ 4, schema_v4 },
	{ 5, schema_v5 },
	{ 6, schema_v6 },
	{ 7, schema_v7 },
	{ 8, schema_v8 },
	{ 9, schema_v9 },
	{ 10, schema_v10 },
	{ 11, schema_v11 },
	{ 12, schema_v12 },
	{ 13, schema_v13 },
	{ 14, schema_v14 },
	{ 15, schema_v15 },
	{ 16, schema_v16 },
	{ 17, schema_v17 },
	{ 18, schema_v18 },
	{ 19, schema_v19 },
	{ 20, schema_v20 },
	{ 21, schema_v21 },
	{ 22, schema_v22 },
	{ 23, schema_v23 },
};
const size_t db_nmigrations = ARRAY_SIZE(db_migrations);
