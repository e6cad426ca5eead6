#!/usr/bin/env bash
# Stand-ins, built from Debian 12's packages, for the three images compose.yaml and the
# Dockerfile name, for machines that cannot pull them (the test of the Docker path runs on
# one). Each is a Debian bookworm root file system made with mmdebstrap and imported into
# podman; nothing is downloaded but Debian packages.
#
#   tests/containers/standins.sh            build what is missing; print the three names as
#                                           PYTHON_IMAGE=... POSTGRES_IMAGE=... CADDY_IMAGE=...
#
# Each image is tagged with a hash of this file, so a second run finds them and takes a
# second; a change to this file makes new ones. How each differs from the real image:
#
#   python    for python:3.11-slim-bookworm. Debian's python3 (3.11) in /usr/bin, with
#             python-is-python3 for `python`, python3-venv for `python -m venv`, and
#             ca-certificates; the real image has its own Python build in /usr/local. Same
#             Debian release underneath, LANG=C.UTF-8 like the real one.
#   postgres  for postgres:18. Debian's PostgreSQL 15 (the oldest the product supports). An
#             entrypoint of our own does what the official one does with what compose.yaml
#             uses: on an empty data directory it runs initdb with POSTGRES_USER as the
#             superuser and POSTGRES_PASSWORD as its password, creates POSTGRES_DB through a
#             server on the socket only, allows password (scram-sha-256) logins from any
#             address and trust on the socket; then it runs `postgres` as the user postgres,
#             listening on 5432 on every address. The data lives under
#             /var/lib/postgresql/15/docker (18's image: /var/lib/postgresql/18/docker), inside
#             the volume compose.yaml mounts on /var/lib/postgresql. None of the official
#             image's other variables (POSTGRES_INITDB_ARGS, /docker-entrypoint-initdb.d, ...).
#   caddy     for caddy:2. Debian's caddy 2.6 (the official image: the newest 2.x), run as the
#             official image runs it (`caddy run --config /etc/caddy/Caddyfile --adapter
#             caddyfile`, XDG_CONFIG_HOME=/config, XDG_DATA_HOME=/data, as root); GNU wget
#             instead of busybox's for compose.yaml's health check. No extra Caddy modules in
#             either.
# The hooks are mmdebstrap's shell snippets: their "$1" (the new root) is theirs to expand.
# shellcheck disable=SC2016
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TAG=$(cat "$HERE/standins.sh" "$HERE/postgres-entrypoint.sh" | sha256sum | cut -c1-12)
# The same runtime settings as the test (tests/containers/podman.conf), when run by hand.
export CONTAINERS_CONF=${CONTAINERS_CONF:-$HERE/podman.conf}

# build NAME PACKAGES CHANGES...: an image from Debian packages, unless it exists; HOOKS (an
# array of mmdebstrap --customize-hook arguments) finish the file system.
build() {
	local name=$1 packages=$2 image tar hook change
	shift 2
	image=localhost/sponsorbot-standin-$name:$TAG
	if podman image exists "$image"; then
		printf '%s\n' "$image"
		return 0
	fi
	tar=$(mktemp --suffix=.tar)
	local -a args=() changes=()
	for hook in "${HOOKS[@]}"; do args+=("--customize-hook=$hook"); done
	for change in "$@"; do changes+=(--change "$change"); done
	# No recommended packages, as apt-get install --no-install-recommends; no package lists.
	mmdebstrap --quiet --variant=minbase --aptopt='APT::Install-Recommends "false"' \
		--include="$packages" "${args[@]}" \
		--customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin' \
		bookworm "$tar" >&2
	podman import "${changes[@]}" "$tar" "$image" >/dev/null
	rm -f "$tar"
	printf '%s\n' "$image"
}

HOOKS=()
python_image=$(build python python3,python3-venv,python-is-python3,ca-certificates \
	'ENV LANG=C.UTF-8' 'CMD ["python3"]')

# Debian's package makes a cluster "main" on installation: the entrypoint makes its own.
HOOKS=(
	'rm -rf "$1"/var/lib/postgresql/15/main "$1"/etc/postgresql/15/main'
	"upload $HERE/postgres-entrypoint.sh /usr/local/bin/docker-entrypoint.sh"
	'chmod 755 "$1"/usr/local/bin/docker-entrypoint.sh'
)
postgres_image=$(build postgres postgresql-15 \
	'ENV PATH=/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
	'ENV PGDATA=/var/lib/postgresql/15/docker' 'ENV LANG=C.UTF-8' \
	'ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]' 'CMD ["postgres"]' \
	'STOPSIGNAL SIGINT' 'EXPOSE 5432')

HOOKS=('mkdir -p "$1"/config "$1"/data "$1"/srv')
caddy_image=$(build caddy caddy,wget,ca-certificates \
	'ENV XDG_CONFIG_HOME=/config' 'ENV XDG_DATA_HOME=/data' 'WORKDIR /srv' \
	'CMD ["caddy", "run", "--config", "/etc/caddy/Caddyfile", "--adapter", "caddyfile"]' \
	'EXPOSE 80' 'EXPOSE 443' 'EXPOSE 443/udp' 'EXPOSE 2019')

printf 'PYTHON_IMAGE=%s\nPOSTGRES_IMAGE=%s\nCADDY_IMAGE=%s\n' \
	"$python_image" "$postgres_image" "$caddy_image"
