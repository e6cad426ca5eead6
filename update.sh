#!/usr/bin/env bash
# Update an installed Sponsorbot (Docker or native, found by itself): back up the database
# first, unpack the new release (its checksum checked), migrate, restart the api and then the
# workers one at a time, so bots keep being answered throughout.
#
#   sudo ./update.sh --release sponsorbot-0.2.0.tar.gz   # sponsorbot-0.2.0.tar.gz.sha256 beside it
#   sudo ./update.sh                                     # rebuild and restart what is in --dir
#   sudo ./update.sh --rollback                          # back to the release that ran before
#
# Like install.sh it prints the plan before changing anything; --dry-run stops there.
#
# The version that runs is the one the last successful run recorded (.installed-version), not
# the one unpacked: after a step fails, the same command again finishes the update. The release
# that ran before stays in previous/ (and, on Docker, as the image sponsorbot:previous).
#
# The release overwrites this very file while it runs, and bash reads a script as it goes: the
# last line runs main and exits inside one command, which bash has read whole before it starts,
# so nothing of the new file is ever read by the old run (deploy/common.sh is read whole when
# sourced).
set -euo pipefail

PROG=update.sh
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=deploy/common.sh
. "$SRC/deploy/common.sh"

RELEASE=""
DIR=/opt/sponsorbot
# Run from an installation (its own copy of this script), that installation is the default.
if [[ -z $ROOT && -f $SRC/.env && $SRC =~ ^/[A-Za-z0-9._/-]+$ ]]; then DIR=$SRC; fi
DRY_RUN=0
YES=0
ALLOW_DOWNGRADE=0
REINSTALL=0
ROLLBACK=0
PULL=1
KEEP_BACKUPS=5
# The images of a Docker install: the one built here, and the one that ran before it.
IMAGE=sponsorbot:local
PREVIOUS_IMAGE=sponsorbot:previous
MODE=""
NEW_VERSION=""
UNPACKED=""

usage() {
	cat <<'EOF'
Usage: update.sh [--release FILE | --rollback] [--dir DIR] [--dry-run] [--yes]
                 [--reinstall] [--allow-downgrade] [--no-pull] [--keep-backups N]

  --release FILE     the new release archive (sponsorbot-<version>.tar.gz, with FILE.sha256)
  --rollback         go back to the release that ran before the last update (and, if that
                     update changed the database, to the backup it made first)
  --dir DIR          the installation (default: this script's own, else /opt/sponsorbot)
  --dry-run          print the checks and the plan, change nothing
  --yes              do not ask
  --reinstall        install a release of the version already installed again
  --allow-downgrade  install an older release (read the warning about the database first)
  --no-pull          Docker: build from the images this server has, pull nothing newer
  --keep-backups N   keep the newest N backups made before updates (default 5)
EOF
}

parse_args() {
	while [[ $# -gt 0 ]]; do
		case $1 in
		--release | --dir | --keep-backups)
			[[ $# -ge 2 ]] || die "$1 needs a value"
			case $1 in
			--release) RELEASE=$2 ;;
			--dir) DIR=${2%/} ;;
			*) KEEP_BACKUPS=$2 ;;
			esac
			shift
			;;
		--dry-run) DRY_RUN=1 ;;
		--yes | -y) YES=1 ;;
		--reinstall) REINSTALL=1 ;;
		--allow-downgrade) ALLOW_DOWNGRADE=1 ;;
		--rollback) ROLLBACK=1 ;;
		--no-pull) PULL=0 ;;
		-h | --help)
			usage
			exit 0
			;;
		*) die "unknown option $1 (see --help)" ;;
		esac
		shift
	done
	[[ $DIR =~ ^/[A-Za-z0-9._/-]+$ ]] || die "--dir must be an absolute path of plain characters"
	[[ $KEEP_BACKUPS =~ ^[1-9][0-9]{0,2}$ ]] || die "--keep-backups must be a number from 1 to 999"
	[[ $ROLLBACK -eq 0 || -z $RELEASE ]] || die "--rollback goes back to the previous release: it takes no --release"
}

detect_mode() {
	if [[ -e $ROOT/etc/systemd/system/sponsorbot-api.service ]]; then
		MODE=native
	elif [[ -e $ROOT$DIR/compose.yaml && -e $ROOT$DIR/.env ]]; then
		MODE=docker
	else
		die "no installation found: neither $DIR/compose.yaml with .env nor the sponsorbot-api unit"
	fi
	say "ok   installation: $MODE, in $DIR, Sponsorbot $(running_version "$ROOT$DIR" || true) runs"
}

# The archive matches its checksum file, and holds one sponsorbot-<version>/ tree, nothing
# outside it.
check_release() {
	[[ -n $RELEASE ]] || return 0
	[[ -f $RELEASE ]] || die "no such release archive: $RELEASE"
	local dir base top listing
	dir=$(cd "$(dirname "$RELEASE")" && pwd)
	base=$(basename "$RELEASE")
	RELEASE="$dir/$base"
	[[ -f $RELEASE.sha256 ]] || die "no checksum file $base.sha256 beside the archive"
	[[ $(awk '{ sub(/^\*/, "", $2); print $2 }' "$RELEASE.sha256") == "$base" ]] ||
		die "$base.sha256 is not the checksum of $base"
	(cd "$dir" && sha256sum --check --status -- "$base.sha256") ||
		die "$base does not match its checksum: download it again"
	say "ok   checksum: $base matches $base.sha256"
	listing=$(tar -tzf "$RELEASE") || die "$base is not a readable .tar.gz archive"
	top=${listing%%/*}
	[[ $top =~ ^sponsorbot-([0-9][0-9A-Za-z.+-]*)$ ]] || die "$base is not a Sponsorbot release archive"
	NEW_VERSION=${BASH_REMATCH[1]}
	if awk -v t="$top/" 'index($0, t) != 1 || /(^|\/)\.\.(\/|$)/ { bad = 1 } END { exit !bad }' <<<"$listing"; then
		die "$base has paths outside $top/: refusing it"
	fi
	say "ok   release: Sponsorbot $NEW_VERSION"
	local running unpacked
	running=$(running_version "$ROOT$DIR")
	unpacked=$(tree_version "$ROOT$DIR")
	if [[ -n $running && $unpacked == "$NEW_VERSION" && $running != "$NEW_VERSION" ]]; then
		say "--   the last update to $NEW_VERSION did not finish (Sponsorbot $running still runs): finishing it"
	fi
	check_version "$running" "$NEW_VERSION"
}

# A version as sort -V orders it right: PEP 440's pre-releases (1.0rc1, 1.0a1.dev2) before
# their release, as a tilde sorts before anything (two before one: dev before a, b and rc).
version_key() {
	sed -E -e 's/\.?dev([0-9]*)$/~~dev\1/' -e 's/(a|b|rc)([0-9]+)/~\1\2/' <<<"$1"
}

# older_than A B: is version A older than version B?
older_than() {
	local a b
	a=$(version_key "$1")
	b=$(version_key "$2")
	[[ $a != "$b" && $(printf '%s\n%s\n' "$a" "$b" | sort -V | head -n 1) == "$a" ]]
}

# check_version INSTALLED NEW: the same version is nothing to do, an older one is refused; the
# older code would be unpacked and built before its migrate refused the newer database.
check_version() {
	local installed=$1 new=$2
	[[ -n $installed ]] || return 0
	if [[ $installed == "$new" ]]; then
		if [[ $REINSTALL -eq 0 ]]; then
			say "already at version $installed: nothing to do (--reinstall installs this release again)"
			exit 0
		fi
		say "--   reinstalling Sponsorbot $installed (--reinstall)"
	elif older_than "$new" "$installed"; then
		[[ $ALLOW_DOWNGRADE -eq 1 ]] ||
			die "Sponsorbot $new is older than the installed $installed: refusing to go back (--allow-downgrade does, after a warning)"
		accept_or_stop "going back from Sponsorbot $installed to the older $new: the database keeps $installed's schema, and if $installed added migrations, $new's migrate refuses the database and this update stops at that step, with $new's code unpacked. To really go back, restore the backup made before the update to $installed (guide: backups and updates)."
	fi
}

# The release is unpacked when its step runs, into a directory removed when the step ends (its
# subshell exits).
unpack_release() {
	UNPACKED=$(mktemp -d)
	trap 'rm -rf "$UNPACKED"' EXIT
	tar -C "$UNPACKED" -xzf "$RELEASE"
	copy_release "$UNPACKED/sponsorbot-$NEW_VERSION" "$ROOT$DIR"
}

# Would the release change this file of the installation?
release_changes() {
	[[ -n $RELEASE ]] || return 1
	! tar -xzOf "$RELEASE" "sponsorbot-$NEW_VERSION/$1" 2>/dev/null | cmp -s - "$ROOT$DIR/$1"
}

backup_name() {
	printf 'sponsorbot-%s-before-update-%s.tar' "$(running_version "$ROOT$DIR" || echo unknown)" "$(date -u +%Y%m%dT%H%M%SZ)"
}

# Is the tree in DIR the release that runs (not one a stopped update left unpacked)?
tree_runs() {
	local running
	running=$(running_version "$ROOT$DIR")
	[[ -n $running && $(tree_version "$ROOT$DIR") == "$running" ]]
}

# keep_previous: the release that runs goes to DIR/previous before a new one is unpacked.
keep_previous() {
	local dir=$ROOT$DIR version
	version=$(running_version "$dir")
	rm -rf "$dir/previous"
	copy_release "$dir" "$dir/previous"
	write_file 644 "$dir/previous/$VERSION_FILE" "$version"$'\n'
}

# prune_backups DIR: only the newest KEEP_BACKUPS backups made before updates stay.
prune_backups() {
	local dir=$1 file
	local -a made=()
	while IFS= read -r -d '' file; do made+=("${file#* }"); done < <(
		find "$dir" -maxdepth 1 -type f -name 'sponsorbot-*-before-update-*.tar' -printf '%T@ %p\0' |
			sort -z -r -n
	)
	for file in "${made[@]:KEEP_BACKUPS}"; do
		rm -f -- "$file"
		say "     removed the old backup $file"
	done
}

plan_docker() {
	local workers name
	# The images pulled and moved to: no Caddy behind the owner's own web server.
	local -a pulled=(db caddy)
	local named="PostgreSQL and Caddy"
	if [[ $(env_get "$ROOT$DIR/.env" BEHIND_PROXY) == yes ]]; then
		pulled=(db)
		named=PostgreSQL
	fi
	workers=$(env_get "$ROOT$DIR/.env" SPONSORBOT_WORKERS)
	workers=${workers:-1}
	name=$(backup_name)
	step "make sure $DIR/backups exists and belongs to the image's user (uid $IMAGE_UID)" \
		install -d -m 0700 -o "$IMAGE_UID" -g "$IMAGE_UID" "$ROOT$DIR/backups"
	step "back up the database to $DIR/backups/$name (sponsorbot backup, in a one-off api container)" \
		compose run --rm --no-deps -T api backup "$DATA_DIR/backups/$name"
	if [[ -n $RELEASE ]]; then
		if tree_runs; then
			step "keep Sponsorbot $(running_version "$ROOT$DIR") for --rollback: its release in $DIR/previous, its image as $PREVIOUS_IMAGE" \
				keep_previous_docker
		fi
		step "unpack Sponsorbot $NEW_VERSION into $DIR (.env and backups kept)" unpack_release
	fi
	if [[ $PULL -eq 1 ]]; then
		step "pull newer $named images, if any (docker compose pull ${pulled[*]})" \
			compose pull "${pulled[@]}"
		step "build the new image on the newest Python base image (docker compose build --pull)" \
			compose build --pull
	else
		step "build the new image from the images this server has (docker compose build; --no-pull)" \
			compose build
	fi
	step "apply the database migrations (the migrate service)" compose run --rm --no-deps -T migrate
	step "restart the api on the new image, then wait for /healthz" restart_docker_api
	step "replace the $workers worker container(s) one at a time: stop one, start one on the new image, wait until it runs" \
		replace_workers "$workers"
	if [[ $PULL -eq 1 ]]; then
		step "move $named to the images pulled, where they are newer (a few seconds without the database: the api and workers reconnect), then wait for /healthz" \
			refresh_images "${pulled[@]}"
	fi
	if [[ ${#pulled[@]} -eq 1 ]]; then
		say "--   no Caddy: this installation is behind your own web server (BEHIND_PROXY=yes in .env)"
	elif release_changes deploy/Caddyfile || release_changes deploy/Caddyfile.docker; then
		step "recreate Caddy: its configuration changed (a second without HTTPS)" \
			compose up -d --no-deps --force-recreate caddy
	fi
	finish_steps "$DIR/backups"
}

keep_previous_docker() {
	keep_previous
	if docker image inspect "$IMAGE" >/dev/null 2>&1; then
		docker tag "$IMAGE" "$PREVIOUS_IMAGE"
	fi
}

# refresh_images SERVICE...: compose recreates a container only when its image changed; the
# quiet point for the database is the end of the update, with every process on the new code.
refresh_images() {
	local port waited=0
	compose up -d --no-deps "$@"
	until compose exec -T db pg_isready --host=127.0.0.1 --username=sponsorbot --dbname=sponsorbot >/dev/null 2>&1; do
		((waited >= 120)) && die "PostgreSQL does not answer 120s after moving it to the new image: docker compose logs db"
		sleep 2
		waited=$((waited + 2))
	done
	port=$(env_get "$ROOT$DIR/.env" SPONSORBOT_API_PORT)
	wait_healthy "${port:-8080}" 120
}

# finish_steps BACKUPS: the last steps of every successful update (and rollback).
finish_steps() {
	step "remove backups made before updates, beyond the newest $KEEP_BACKUPS, from $1" \
		prune_backups "$ROOT$1"
	local version=${NEW_VERSION:-$(tree_version "$ROOT$DIR")}
	step "record that Sponsorbot $version runs ($DIR/$VERSION_FILE)" record_version "$ROOT$DIR" "$version"
}

# restart_docker_api [--force-recreate]: the api on the image tagged now.
restart_docker_api() {
	local port
	port=$(env_get "$ROOT$DIR/.env" SPONSORBOT_API_PORT)
	compose up -d --no-deps "$@" api
	wait_healthy "${port:-8080}" 120
}

# Compose would recreate every worker at once; this keeps N-1 of them answering: remove one
# old container, then `up --no-recreate --scale worker=N` starts one on the new image in its
# place and leaves the other old ones alone.
replace_workers() {
	local n=$1 id fresh old
	old=$(compose ps -q worker)
	for id in $old; do
		docker stop --time 20 "$id" >/dev/null
		docker rm "$id" >/dev/null
		compose up -d --no-deps --no-recreate --scale "worker=$n" worker
		fresh=$(compose ps -q worker | grep -vxF "$old" || true)
		wait_running "$fresh"
	done
	# Fewer than N were running (or none): bring the count up.
	compose up -d --no-deps --no-recreate --scale "worker=$n" worker
}

# Running, and still running SETTLE_SECONDS later without a restart.
wait_running() {
	local id state
	sleep "$SETTLE_SECONDS"
	for id in $1; do
		state=$(docker inspect -f '{{.State.Running}} {{.RestartCount}}' "$id")
		[[ $state == "true 0" ]] || die "the new worker container $id does not stay up: docker logs $id"
	done
	return 0
}

plan_native() {
	local name workers
	name=$(backup_name)
	workers=$(enabled_workers | tr '\n' ' ')
	step "back up the database to $DATA_DIR/backups/$name (sponsorbot backup, as the user sponsorbot)" \
		native_backup "$name"
	if [[ -n $RELEASE ]]; then
		if tree_runs; then
			step "keep Sponsorbot $(running_version "$ROOT$DIR")'s release in $DIR/previous, for --rollback" keep_previous
		fi
		step "unpack Sponsorbot $NEW_VERSION into $DIR (.env and the venv kept)" unpack_release
	fi
	step "build a new virtual environment $DIR/venv.new with the code in $DIR (pip); the running one is left alone" \
		build_venv
	if release_changes deploy/systemd/sponsorbot-api.service || release_changes "deploy/systemd/sponsorbot-worker@.service"; then
		step "install the release's systemd units and reload systemd" write_units "$ROOT$DIR"
	fi
	step "apply the database migrations (sponsorbot migrate, the new code's)" native_migrate
	step "put the new virtual environment in place: $DIR/venv becomes venv.old, venv.new becomes venv" \
		swap_venv "$name"
	step "restart sponsorbot-api, then wait for /healthz" native_restart_api
	if [[ -n $workers ]]; then
		step "restart the workers one at a time, each running again before the next: ${workers% }" \
			native_restart_workers
	else
		say "--   no enabled sponsorbot-worker@N units: no worker to restart"
	fi
	plan_native_caddy
	finish_steps "$DATA_DIR/backups"
}

# The new code goes into a venv of its own beside the running one, not into it: pip would swap
# files under the running api and workers, which read templates and translations as they go.
# The swap (swap_venv) is two renames right before the restarts.
build_venv() {
	local venv=$ROOT$DIR/venv
	rm -rf "$venv.new"
	python3 -m venv --prompt venv "$venv.new"
	pip_install_release "$venv.new" "$ROOT$DIR"
	repoint_scripts "$venv.new" "$venv"
	own_by_root "$venv.new"
}

# repoint_scripts BUILT FINAL: pip writes the venv's path into its scripts (the #! line of bin/
# sponsorbot, activate's VIRTUAL_ENV); built at venv.new, they must name venv, where they run.
# The path is replaced as a plain string (awk's index), and each file keeps its inode and mode.
repoint_scripts() {
	local built=$1 final=$2 file text
	while IFS= read -r -d '' file; do
		text=$(awk -v from="$built" -v to="$final" '{
			out = ""
			while ((i = index($0, from)) > 0) {
				out = out substr($0, 1, i - 1) to
				$0 = substr($0, i + length(from))
			}
			print out $0
		}' "$file")
		printf '%s\n' "$text" >"$file"
	done < <(grep -lIZF -- "$built" "$built"/bin/* "$built/pyvenv.cfg" || true)
}

# The migrations of the code about to run: with venv.new, before it takes venv's place.
native_migrate() {
	VENV=$DIR/venv.new run_as_sponsorbot migrate
}

# venv_version VENV: the Sponsorbot version installed in a virtual environment.
venv_version() {
	local init
	for init in "$1"/lib/python3*/site-packages/sponsorbot/__init__.py; do
		[[ -r $init ]] && sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$init"
	done
	return 0
}

# swap_venv BACKUP: venv.new becomes venv; the one that ran is kept as venv.old, for going back.
# A venv that never ran (an update that stopped after swapping) is dropped instead, so venv.old
# stays the one to go back to.
swap_venv() {
	local venv=$ROOT$DIR/venv
	[[ -d $venv.new ]] || die "$DIR/venv.new is missing: build it first"
	if [[ -d $venv.old && $(venv_version "$venv") != "$(running_version "$ROOT$DIR")" ]]; then
		rm -rf "$venv"
	else
		rm -rf "$venv.old"
		mv -T "$venv" "$venv.old"
	fi
	mv -T "$venv.new" "$venv"
	say "     the previous venv is $DIR/venv.old; to go back to it: sudo $DIR/update.sh --rollback (it restores the backup $1 if the update changed the database)"
}

# /etc/caddy/sponsorbot.caddy is made from the release's deploy/Caddyfile, as install.sh made
# it; rewritten (and Caddy reloaded) only when that gives something else than the file there.
plan_native_caddy() {
	local site="$ROOT/etc/caddy/sponsorbot.caddy" domain port template content
	if [[ ! -e $site ]]; then
		say "--   no /etc/caddy/sponsorbot.caddy: Caddy's configuration is left alone"
		return 0
	fi
	domain=$(env_get "$ROOT$DIR/.env" SPONSORBOT_PUBLIC_URL | sed 's#^https://##')
	if [[ -z $domain ]]; then
		say "--   no SPONSORBOT_PUBLIC_URL in $DIR/.env: /etc/caddy/sponsorbot.caddy is left alone"
		return 0
	fi
	port=$(env_get "$ROOT$DIR/.env" SPONSORBOT_PORT)
	if [[ -n $RELEASE ]]; then
		template=$(tar -xzOf "$RELEASE" "sponsorbot-$NEW_VERSION/deploy/Caddyfile" 2>/dev/null) ||
			die "$(basename "$RELEASE") has no deploy/Caddyfile: it is not a whole release"
	else
		template=$(cat "$ROOT$DIR/deploy/Caddyfile") || die "$DIR/deploy/Caddyfile is missing"
	fi
	content=$(caddy_site "$domain" "127.0.0.1:${port:-8080}" <<<"$template")
	if [[ $content == "$(<"$site")" ]]; then
		say "ok   /etc/caddy/sponsorbot.caddy: the release's site is the same"
		return 0
	fi
	step "rewrite /etc/caddy/sponsorbot.caddy from the release's site, check it (caddy validate) and reload Caddy" \
		native_caddy "$content"$'\n'
}

# native_caddy CONTENT: the new site, put back as it was if Caddy finds it invalid.
native_caddy() {
	local site="$ROOT/etc/caddy/sponsorbot.caddy" before
	before=$(<"$site")
	write_file 644 "$site" "$1"
	if ! caddy validate --adapter caddyfile --config /etc/caddy/Caddyfile; then
		write_file 644 "$site" "$before"$'\n'
		die "Caddy finds the new site invalid: /etc/caddy/sponsorbot.caddy is as it was"
	fi
	systemctl reload caddy
}

native_backup() {
	install -d -m 0700 -o sponsorbot -g sponsorbot "$ROOT$DATA_DIR/backups"
	run_as_sponsorbot backup "$DATA_DIR/backups/$1"
}

native_restart_api() {
	local port
	port=$(env_get "$ROOT$DIR/.env" SPONSORBOT_PORT)
	systemctl restart sponsorbot-api.service
	wait_healthy "${port:-8080}" 90
}

native_restart_workers() {
	local n unit
	for n in $(enabled_workers); do
		unit="sponsorbot-worker@$n.service"
		# restart returns once the new process runs; SETTLE_SECONDS more show it stays up.
		systemctl restart "$unit"
		sleep "$SETTLE_SECONDS"
		systemctl is-active --quiet "$unit" || die "$unit did not stay up: journalctl -u $unit"
		say "     $unit restarted"
	done
}

# ---------------------------------------------------------------- --rollback

ROLLBACK_TO=""
ROLLBACK_BACKUP=""

# What going back means: the previous release, and the backup to restore when the release that
# runs added migrations the previous one does not know (its code would refuse the database).
check_rollback() {
	local dir=$ROOT$DIR running added backups
	[[ -r $dir/previous/$VERSION_FILE ]] ||
		die "there is no previous release in $DIR/previous to go back to (it is kept from the first update made by this update.sh on)"
	ROLLBACK_TO=$(running_version "$dir/previous")
	running=$(running_version "$dir")
	if [[ $MODE == native && ! -d $dir/venv.old ]]; then
		die "$DIR/venv.old is missing: the previous code cannot be put back"
	fi
	if [[ $MODE == docker ]] && ! docker image inspect "$PREVIOUS_IMAGE" >/dev/null 2>&1; then
		[[ $DRY_RUN -eq 1 ]] || die "there is no image $PREVIOUS_IMAGE: the previous code cannot be put back"
	fi
	say "ok   going back from Sponsorbot $running to $ROLLBACK_TO (kept in $DIR/previous)"
	added=$(comm -13 <(migration_names "$dir/previous") <(migration_names "$dir") | tr '\n' ' ')
	if [[ -z $added ]]; then
		say "ok   database: $running added no migration, so $ROLLBACK_TO runs on it as it is"
		return 0
	fi
	backups=$DIR/backups
	[[ $MODE == native ]] && backups=$DATA_DIR/backups
	ROLLBACK_BACKUP=$(find "$ROOT$backups" -maxdepth 1 -type f -name "sponsorbot-$ROLLBACK_TO-before-update-*.tar" -printf '%f\n' 2>/dev/null | sort | tail -n 1)
	[[ -n $ROLLBACK_BACKUP ]] ||
		die "$running added migrations (${added% }) and no backup made before the update to it is in $backups: $ROLLBACK_TO's code would refuse the database"
	accept_or_stop "$running changed the database (migrations ${added% }): going back restores $backups/$ROLLBACK_BACKUP, the backup made before the update, and everything since it (visitors, orders, payments) is lost"
}

# migration_names TREE: the migration files a release holds, one name a line, sorted.
migration_names() {
	find "$1/src/sponsorbot/db/migrations" -maxdepth 1 -name '*.sql' -printf '%f\n' 2>/dev/null | sort
}

# swap_previous: the release that runs and the one in previous/ change places.
swap_previous() {
	local dir=$ROOT$DIR running before
	running=$(running_version "$dir")
	before=$(running_version "$dir/previous")
	rm -rf "$dir/previous.swap"
	copy_release "$dir" "$dir/previous.swap"
	copy_release "$dir/previous" "$dir"
	rm -rf "$dir/previous"
	mv -T "$dir/previous.swap" "$dir/previous"
	write_file 644 "$dir/previous/$VERSION_FILE" "$running"$'\n'
	say "     $DIR holds Sponsorbot $before again; $running is kept in $DIR/previous"
}

swap_images() {
	docker tag "$IMAGE" sponsorbot:rollback-swap
	docker tag "$PREVIOUS_IMAGE" "$IMAGE"
	docker tag sponsorbot:rollback-swap "$PREVIOUS_IMAGE"
	docker rmi sponsorbot:rollback-swap >/dev/null
}

swap_venvs() {
	local venv=$ROOT$DIR/venv
	mv -T "$venv" "$venv.swap"
	mv -T "$venv.old" "$venv"
	mv -T "$venv.swap" "$venv.old"
}

plan_rollback() {
	local workers
	if [[ $MODE == docker ]]; then
		workers=$(env_get "$ROOT$DIR/.env" SPONSORBOT_WORKERS)
		step "stop the api and the workers (docker compose stop api worker)" compose stop api worker
		step "put Sponsorbot $ROLLBACK_TO's release back in $DIR (the one that ran goes to previous/)" swap_previous
		step "make $PREVIOUS_IMAGE the image that runs, and keep the other as $PREVIOUS_IMAGE" swap_images
		if [[ -n $ROLLBACK_BACKUP ]]; then
			step "restore $DIR/backups/$ROLLBACK_BACKUP with $ROLLBACK_TO's code" \
				compose run --rm --no-deps -T api restore "$DATA_DIR/backups/$ROLLBACK_BACKUP" --force
		fi
		step "apply $ROLLBACK_TO's migrations (the migrate service)" compose run --rm --no-deps -T migrate
		step "start the api on $ROLLBACK_TO, then wait for /healthz" restart_docker_api --force-recreate
		step "start ${workers:-1} worker(s) on $ROLLBACK_TO" \
			compose up -d --no-deps --force-recreate --scale "worker=${workers:-1}" worker
	else
		workers=$(enabled_workers | sed 's/.*/sponsorbot-worker@&.service/' | tr '\n' ' ')
		# shellcheck disable=SC2086 # one word per unit
		step "stop sponsorbot-api and the workers" systemctl stop sponsorbot-api.service $workers
		step "put Sponsorbot $ROLLBACK_TO's release back in $DIR (the one that ran goes to previous/)" swap_previous
		step "put $ROLLBACK_TO's code back: $DIR/venv.old and venv change places" swap_venvs
		if [[ -n $ROLLBACK_BACKUP ]]; then
			step "restore $DATA_DIR/backups/$ROLLBACK_BACKUP with $ROLLBACK_TO's code" \
				run_as_sponsorbot restore "$DATA_DIR/backups/$ROLLBACK_BACKUP" --force
		fi
		step "apply $ROLLBACK_TO's migrations" run_as_sponsorbot migrate
		step "start sponsorbot-api, then wait for /healthz" native_restart_api
		if [[ -n $workers ]]; then
			step "start the workers one at a time: ${workers% }" native_restart_workers
		fi
	fi
	NEW_VERSION=$ROLLBACK_TO
	step "record that Sponsorbot $ROLLBACK_TO runs ($DIR/$VERSION_FILE)" record_version "$ROOT$DIR" "$ROLLBACK_TO"
}

main() {
	parse_args "$@"
	if [[ $EUID -ne 0 && -z $ROOT && $DRY_RUN -eq 0 ]]; then
		die "run it as root (sudo ./update.sh ...)"
	fi
	detect_mode
	warn_unreadable_env "$ROOT$DIR/.env"
	if [[ $MODE == docker ]] && ! have_compose; then
		[[ $DRY_RUN -eq 1 ]] || die "neither 'docker compose' nor 'docker-compose' is installed"
		warn "neither 'docker compose' nor 'docker-compose' is installed: the update needs one"
	fi
	if [[ $ROLLBACK -eq 1 ]]; then
		check_rollback
		plan_rollback
	else
		check_release
		if [[ $MODE == native ]]; then plan_native; else plan_docker; fi
	fi
	print_plan
	confirm_plan
	umask 022
	run_plan
	local kept=$DIR/backups
	[[ $MODE == native ]] && kept=$DATA_DIR/backups
	if [[ $ROLLBACK -eq 1 ]]; then
		say "rolled back: Sponsorbot $ROLLBACK_TO runs; sudo $DIR/update.sh --rollback goes forward again"
		return 0
	fi
	say "updated: Sponsorbot ${NEW_VERSION:-$(tree_version "$ROOT$DIR")} runs; the backup made first is in $kept"
	if [[ -r $ROOT$DIR/previous/$VERSION_FILE ]]; then
		say "the previous release stays in $DIR/previous until the next update: sudo $DIR/update.sh --rollback goes back to it"
	fi
}

# One command, read whole before it runs, and exit inside it (see the top of this file).
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
	main "$@"
	exit
fi
