# Sourced by .ci/run: a throwaway PostgreSQL cluster for agentgate-store's
# PostgreSQL tests, which read its URL from AGENTGATE_TEST_POSTGRES (and skip,
# saying so, when it is unset). Installs Debian's postgresql when missing,
# runs initdb + pg_ctl as the non-root `postgres` user on a temporary
# directory and a free loopback port, creates a database, exports the URL,
# and stops the cluster when the calling shell exits. Any failure prints why
# and leaves the variable unset. A URL already in the environment is used as
# it is.

agentgate_pg_dir=""
agentgate_pg_as=()

stop_test_postgres() {
  if [ -n "$agentgate_pg_dir" ] && [ -d "$agentgate_pg_dir/data" ]; then
    "${agentgate_pg_as[@]}" "$agentgate_pg_bin/pg_ctl" -D "$agentgate_pg_dir/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$agentgate_pg_dir"
  fi
}

start_test_postgres() {
  if [ -n "${AGENTGATE_TEST_POSTGRES:-}" ]; then
    echo "== PostgreSQL tests use AGENTGATE_TEST_POSTGRES from the environment"
    return 0
  fi
  agentgate_pg_bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
  if [ -z "$agentgate_pg_bin" ]; then
    echo "== apt-get install postgresql (for agentgate-store's PostgreSQL tests)"
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; }; then
      echo "(postgresql did not install; the PostgreSQL tests are skipped)"
      return 0
    fi
    agentgate_pg_bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
    [ -n "$agentgate_pg_bin" ] || { echo "(no PostgreSQL binaries after the install; the PostgreSQL tests are skipped)"; return 0; }
  fi
  # initdb refuses to run as root: as root, run the cluster as `postgres`.
  if [ "$(id -u)" = 0 ]; then
    if ! id postgres >/dev/null 2>&1; then
      echo "(no 'postgres' user to run the cluster as; the PostgreSQL tests are skipped)"
      return 0
    fi
    agentgate_pg_as=(runuser -u postgres --)
  fi
  agentgate_pg_dir="$(mktemp -d /tmp/agentgate-pg.XXXXXX)"
  [ "$(id -u)" = 0 ] && chown postgres "$agentgate_pg_dir"
  trap stop_test_postgres EXIT
  local port
  for port in $(seq $((55000 + RANDOM % 5000)) 60999); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || break
  done
  if ! "${agentgate_pg_as[@]}" "$agentgate_pg_bin/initdb" -D "$agentgate_pg_dir/data" -U postgres -A trust -E UTF8 --no-sync >"$agentgate_pg_dir/initdb.log" 2>&1; then
    echo "(initdb failed, the PostgreSQL tests are skipped):"; tail -n 20 "$agentgate_pg_dir/initdb.log"
    return 0
  fi
  if ! "${agentgate_pg_as[@]}" "$agentgate_pg_bin/pg_ctl" -D "$agentgate_pg_dir/data" -l "$agentgate_pg_dir/server.log" -w \
      -o "-p $port -k $agentgate_pg_dir -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=200" start >/dev/null; then
    echo "(the PostgreSQL server did not start, its tests are skipped):"; tail -n 20 "$agentgate_pg_dir/server.log"
    return 0
  fi
  if ! "${agentgate_pg_as[@]}" "$agentgate_pg_bin/createdb" -h 127.0.0.1 -p "$port" -U postgres agentgate_test; then
    echo "(createdb failed; the PostgreSQL tests are skipped)"
    return 0
  fi
  export AGENTGATE_TEST_POSTGRES="postgres://postgres@127.0.0.1:$port/agentgate_test"
  echo "== PostgreSQL $("$agentgate_pg_bin/postgres" --version | awk '{print $3}') for the tests at $AGENTGATE_TEST_POSTGRES"
}
