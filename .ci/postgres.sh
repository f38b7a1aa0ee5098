#!/usr/bin/env bash
# Starts Debian's PostgreSQL if it is installed (this script installs nothing), makes sure role and database
# "pega" (password "pega") exist, and prints the JDBC URL for PEGA_TEST_POSTGRES_URL on stdout.
# Everything else goes to stderr. Exits 1 when no PostgreSQL server is installed or it does not come up.
#
# Usage (from .ci/run):  export PEGA_TEST_POSTGRES_URL="$(bash .ci/postgres.sh)" || true
set -euo pipefail

PG_PORT="${PEGA_PG_PORT:-5432}"
log() { echo "postgres.sh: $*" >&2; }

if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
  log "no PostgreSQL server installed (apt-get install postgresql); PostgreSQL tests will be skipped"
  exit 1
fi

as_postgres() {
  if [ "$(id -un)" = postgres ]; then "$@"; elif command -v runuser >/dev/null 2>&1; then runuser -u postgres -- "$@";
  else su postgres -s /bin/sh -c "$(printf '%q ' "$@")"; fi
}

ready() { as_postgres psql -p "$PG_PORT" -tAc 'select 1' >/dev/null 2>&1; }

if ! ready; then
  if command -v pg_lsclusters >/dev/null 2>&1; then
    # Debian's wrapper: start every configured cluster (normally "15 main"), create one if there is none.
    if [ -z "$(pg_lsclusters -h 2>/dev/null)" ]; then
      version="$(ls /usr/lib/postgresql | sort -V | tail -1)"
      log "creating cluster $version/main"
      pg_createcluster "$version" main -p "$PG_PORT" >&2
    fi
    pg_lsclusters -h | while read -r version cluster _rest; do
      pg_ctlcluster "$version" "$cluster" start >&2 || true
    done
  else
    service postgresql start >&2 || true
  fi
  for _ in $(seq 1 60); do ready && break; sleep 0.5; done
fi

if ! ready; then
  log "PostgreSQL did not accept connections on port $PG_PORT"
  exit 1
fi

as_postgres psql -p "$PG_PORT" -v ON_ERROR_STOP=1 -q >&2 <<'SQL'
DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'pega') THEN
    CREATE ROLE pega LOGIN PASSWORD 'pega';
  END IF;
END $$;
SQL
if [ "$(as_postgres psql -p "$PG_PORT" -tAc "select 1 from pg_database where datname = 'pega'")" != 1 ]; then
  as_postgres createdb -p "$PG_PORT" -O pega pega >&2
fi

echo "jdbc:postgresql://127.0.0.1:${PG_PORT}/pega?user=pega&password=pega"
