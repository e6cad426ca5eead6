#!/usr/bin/env bash
# `docker` for update.sh in the Docker-path test (tests/containers/kit.py puts it on PATH under
# that name): podman, and podman-compose for `docker compose`, run in the install directory with
# PODMAN_COMPOSE (its path), PODMAN_BUILD_ARGS and CONTAINERS_CONF set by the test.
#
# Where podman-compose 1.6 does not do what Docker Compose does with the same words, this does:
#   compose ps -q SERVICE   Docker lists the service's running containers; podman-compose takes
#                           no service and lists every container of the project, stopped too.
#   compose build           podman-compose builds the image once per service that names it,
#                           all at once; api, migrate and worker share one, so it is built once.
#   compose up SERVICE...   Docker recreates a container whose image changed (a new build under
#                           the same tag); podman-compose only one whose settings changed. A
#                           service whose container runs another image than its tag names is
#                           recreated (--force-recreate), unless --no-recreate was given.
set -euo pipefail

if [[ ${1:-} != compose ]]; then
	exec podman "$@"
fi
shift
compose=("$PODMAN_COMPOSE" "--podman-build-args=$PODMAN_BUILD_ARGS")
project=$(sed -n 's/^COMPOSE_PROJECT_NAME=//p' .env | tail -n 1)

# The services named among ARGS (the words after the subcommand that are not options or their
# values; only --scale and --time take one in what update.sh runs).
services() {
	local skip=0 word
	for word in "$@"; do
		if [[ $skip -eq 1 ]]; then
			skip=0
		elif [[ $word == --scale || $word == --time || $word == -t ]]; then
			skip=1
		elif [[ $word != -* ]]; then
			printf '%s\n' "$word"
		fi
	done
}

# The image a service's containers are made from: its tag's image id.
tag_id() {
	local image
	image=$("${compose[@]}" config 2>/dev/null | awk -v s="  $1:" '
		$0 == s { inside = 1; next }
		inside && /^  [^ ]/ { inside = 0 }
		inside && $1 == "image:" { print $2; exit }')
	podman image inspect --format '{{.Id}}' "$image" 2>/dev/null || true
}

case ${1:-} in
ps)
	shift
	filters=(--filter "label=io.podman.compose.project=$project")
	for service in $(services "$@"); do
		filters+=(--filter "label=io.podman.compose.service=$service")
	done
	exec podman ps -q --no-trunc "${filters[@]}"
	;;
build)
	shift
	exec "${compose[@]}" build "$@" api
	;;
up)
	shift
	extra=()
	if [[ " $* " != *" --no-recreate "* && " $* " != *" --force-recreate "* ]]; then
		for service in $(services "$@"); do
			want=$(tag_id "$service")
			running=$(podman ps -a --no-trunc --format '{{.ImageID}}' \
				--filter "label=io.podman.compose.project=$project" \
				--filter "label=io.podman.compose.service=$service")
			if [[ -n $want && -n $running ]] && grep -qvxF "${want#sha256:}" <<<"$running"; then
				extra=(--force-recreate)
			fi
		done
	fi
	exec "${compose[@]}" up "${extra[@]}" "$@"
	;;
*)
	exec "${compose[@]}" "$@"
	;;
esac
