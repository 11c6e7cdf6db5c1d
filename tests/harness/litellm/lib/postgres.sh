# shellcheck shell=bash
# The harness's PostgreSQL: a throw-away cluster in $STATE/pg, listening on
# 127.0.0.1:$PG_PORT only and trusting every connection there (the tests
# connect as the `postgres` superuser without a password and create roles
# and databases of their own). Durability is off: nothing here is kept.
# Sourced after common.sh; needs PG_BINDIR and PG_PORT.

pg_ctl_() { as_db_owner "$PG_BINDIR/pg_ctl" -D "$PGDATA" "$@"; }

pg_running() { [ -f "$PGDATA/PG_VERSION" ] && pg_ctl_ status >/dev/null 2>&1; }

pg_create_cluster() {
  mkdir -p "$STATE/pg"
  if is_root; then chown postgres: "$STATE/pg"; fi
  as_db_owner test -w "$STATE/pg" ||
    fail "the postgres user cannot write $STATE/pg (every parent directory of LITELLM_HARNESS_DIR must be traversable by it)"
  as_db_owner "$PG_BINDIR/initdb" --pgdata="$PGDATA" --username=postgres --auth=trust \
    --encoding=UTF8 --no-locale >"$LOGS/initdb.log" 2>&1 ||
    { tail -n 20 "$LOGS/initdb.log" >&2; fail "initdb failed (log: $LOGS/initdb.log)"; }
  as_db_owner tee -a "$PGDATA/postgresql.conf" >/dev/null <<EOF

# ---- LiteLLM test harness (tests/harness/litellm) ----
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = ''
max_connections = 300
fsync = off
synchronous_commit = off
full_page_writes = off
log_min_messages = warning
EOF
}

pg_start() {
  pg_ctl_ --log="$PG_LOG" --wait --timeout=60 start >/dev/null 8>&- ||
    { tail -n 20 "$PG_LOG" >&2 || true; fail "PostgreSQL did not start (log: $PG_LOG)"; }
}

pg_stop() {
  pg_running || return 0
  say "stopping PostgreSQL ($PGDATA)"
  pg_ctl_ --mode=fast --wait --timeout=60 stop >/dev/null 2>&1 ||
    pg_ctl_ --mode=immediate --wait --timeout=30 stop >/dev/null 2>&1 || true
}

psql_as() { # psql_as ROLE DATABASE ARGS...
  local role=$1 db=$2
  shift 2
  PGOPTIONS='-c client_min_messages=warning' psql -X -q -v ON_ERROR_STOP=1 "postgresql://$role@127.0.0.1:$PG_PORT/$db" "$@"
}

# The psql script that applies every migration of $1 in name order and
# records each in _prisma_migrations (as `prisma migrate deploy` would):
# one transaction per migration, except those with CREATE INDEX
# CONCURRENTLY, which cannot run inside one.
migration_script() {
  local dir=$1 name file sum quoted
  cat <<'SQL'
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY,
  "checksum" VARCHAR(64) NOT NULL,
  "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL,
  "logs" TEXT,
  "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
);
SQL
  while IFS= read -r -d '' name; do
    file=$dir/$name/migration.sql
    [ -f "$file" ] || fail "migration without migration.sql: $dir/$name"
    sum=$(sha256sum <"$file" | cut -c1-64)
    quoted=${name//\'/\'\'}
    grep -qi 'CONCURRENTLY' "$file" || echo 'BEGIN;'
    printf "\\i '%s'\n" "${file//\'/\'\'}"
    printf "INSERT INTO \"_prisma_migrations\" (id, checksum, finished_at, migration_name, applied_steps_count) VALUES (gen_random_uuid()::text, '%s', now(), '%s', 1);\n" "$sum" "$quoted"
    grep -qi 'CONCURRENTLY' "$file" || echo 'COMMIT;'
  done < <(find "$dir" -mindepth 1 -maxdepth 1 -type d -printf '%f\0' | LC_ALL=C sort -z)
}

# Role `litellm`, the pristine database built from LiteLLM's migrations and
# checked against schema.prisma, and the live database copied from it
# (reset.sh makes a fresh copy).
pg_create_litellm_database() {
  local migrations=$1 schema=$2 count
  psql_as postgres postgres \
    -c "CREATE ROLE $DB_USER LOGIN PASSWORD '$DB_PASSWORD' CREATEDB" \
    -c "CREATE DATABASE $DB_TEMPLATE OWNER $DB_USER"
  migration_script "$migrations" >"$STATE/migrations.sql"
  count=$(grep -c '^\\i ' "$STATE/migrations.sql" || true)
  [ "$count" -gt 0 ] || fail "no migrations found in $migrations"
  psql_as "$DB_USER" "$DB_TEMPLATE" -f "$STATE/migrations.sql" >"$LOGS/migrations.log" 2>&1 ||
    { tail -n 20 "$LOGS/migrations.log" >&2; fail "applying LiteLLM's migrations failed (log: $LOGS/migrations.log)"; }
  psql_as "$DB_USER" "$DB_TEMPLATE" -At -F $'\t' \
    -c "SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = 'public'" |
    "$VENV/bin/python" "$HARNESS_HOME/python/check_schema.py" "$schema" >"$LOGS/schema-check.log" 2>&1 ||
    { cat "$LOGS/schema-check.log" >&2; fail "the migrated database does not match LiteLLM's schema.prisma"; }
  pg_copy_live_database
  say "applied $count migrations; $(tail -n 1 "$LOGS/schema-check.log")"
}

pg_copy_live_database() {
  psql_as postgres postgres \
    -c "DROP DATABASE IF EXISTS $DB_NAME WITH (FORCE)" \
    -c "CREATE DATABASE $DB_NAME TEMPLATE $DB_TEMPLATE OWNER $DB_USER"
}
