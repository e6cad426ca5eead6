#!/bin/sh
# The official postgres image's entrypoint, for what compose.yaml uses of it (tests/containers/
# standins.sh builds it into the stand-in): first start initialises the data directory.
set -eu
PGDATA=${PGDATA:-/var/lib/postgresql/15/docker}
if [ "$(id -u)" = 0 ]; then
	mkdir -p "$PGDATA" /run/postgresql
	chown postgres:postgres /var/lib/postgresql /var/lib/postgresql/15 "$PGDATA" /run/postgresql
	chmod 700 "$PGDATA"
	exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi
if [ ! -s "$PGDATA/PG_VERSION" ]; then
	: "${POSTGRES_PASSWORD:?the postgres stand-in needs POSTGRES_PASSWORD}"
	user=${POSTGRES_USER:-postgres}
	pwfile=$(mktemp)
	printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
	initdb -D "$PGDATA" --username="$user" --pwfile="$pwfile" --auth-local=trust \
		--auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 >/dev/null
	rm -f "$pwfile"
	printf 'host all all all scram-sha-256\n' >>"$PGDATA/pg_hba.conf"
	printf "listen_addresses = '*'\n" >>"$PGDATA/postgresql.conf"
	db=${POSTGRES_DB:-$user}
	if [ "$db" != postgres ]; then
		pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
		printf 'CREATE DATABASE :"db";\n' | psql -X -q -v ON_ERROR_STOP=1 -v db="$db" \
			--username="$user" --dbname=postgres
		pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
	fi
	echo "postgres stand-in: initialised $PGDATA"
fi
exec "$@" -D "$PGDATA"
