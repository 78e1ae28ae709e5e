#!/usr/bin/env bash
# load-growth.sh DATABASE_URL SEED [LOAD ARGS...]
#
# Measures the load mix on a store that already holds SEED matches: starts
# `earshot serve` on DATABASE_URL (an empty database: sqlite://PATH or a
# new Postgres database), ingests SEED matching posts through the API as
# fast as the server takes them, marks them scored in one UPDATE (scoring
# a million matches one by one would still be running during the
# measurement), restarts the server and runs earshot-load against it.
# Everything stays on 127.0.0.1.
#
#	scripts/load-growth.sh sqlite:///tmp/growth/earshot.db 1000000 -rate 200 -duration 20s
set -euo pipefail

db=${1:?usage: load-growth.sh DATABASE_URL SEED [LOAD ARGS...]}
seed=${2:?usage: load-growth.sh DATABASE_URL SEED [LOAD ARGS...]}
shift 2
addr=127.0.0.1:${EARSHOT_LOAD_PORT:-18080}
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT

go build -o "$work/earshot" ./cmd/earshot
go build -o "$work/earshot-load" ./cmd/earshot-load

serve() {
	EARSHOT_DATABASE_URL=$db EARSHOT_ADDR=$addr EARSHOT_RATE_LIMIT_PER_MINUTE=1000000 EARSHOT_HELPER_RATE_LIMIT_PER_MINUTE=1000000 \
		EARSHOT_SECRET_KEY=load-growth-secret-key-load-growth-secret EARSHOT_LOG_FORMAT=json \
		"$work/earshot" serve >>"$work/out" 2>>"$work/log" &
	pid=$!
	for _ in $(seq 100); do
		curl -fs "http://$addr/readyz" >/dev/null && return
		sleep 0.2
	done
	echo "earshot serve did not become ready; its log:" >&2
	cat "$work/log" >&2
	exit 1
}

serve
key=$(sed -n 's/.*API key (every scope): *//p' "$work/out")
ingest=$(sed -n 's/.*ingest key: *//p' "$work/out")
[ -n "$key" ] && [ -n "$ingest" ] || { echo "no bootstrap keys: is the database empty?" >&2; exit 1; }

"$work/earshot-load" -url "http://$addr" -key "$key" -ingest-key "$ingest" -seed "$seed" -rate 1 -duration 1s | grep seeded
kill "$pid"
wait "$pid" || true

# packed_score is the three packed as the store packs a score.
sql="UPDATE matches SET score = 50, intent = 'question', reason = 'seeded for a load test', packed_score = '2:508:question22:seeded for a load test', scored_at = created_us WHERE score IS NULL"
case $db in
sqlite://*) sqlite3 "${db#sqlite://}" "$sql; ANALYZE;" ;;
postgres://* | postgresql://*) psql -q "$db" -c "$sql" -c "VACUUM FULL ANALYZE matches" ;;
*) echo "unknown database URL $db" >&2; exit 1 ;;
esac

serve
case $db in
sqlite://*) size=$(du -b "${db#sqlite://}" | cut -f1) ;;
*) size=$(psql -tA "$db" -c "SELECT pg_database_size(current_database())") ;;
esac
echo "store: $(printf %d "$seed") seeded matches, database $((size / 1024 / 1024)) MiB"
"$work/earshot-load" -url "http://$addr" -key "$key" -ingest-key "$ingest" "$@"
