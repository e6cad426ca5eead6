# shellcheck shell=bash
# The constants below are used by install.sh and update.sh, which source this file.
# shellcheck disable=SC2034
# Shared by install.sh and update.sh (sourced, never run): the plan, reading and writing .env,
# Docker Compose, waiting for /healthz, copying a release into the install directory.
#
# Every change is recorded with `step` first and only carried out by `run_plan`, after the
# plan was printed and confirmed; --dry-run prints it and stops. So what is printed is exactly
# what runs.
#
# SPONSORBOT_INSTALL_ROOT relocates every file the scripts read back or write (.env, units,
# the Caddy files) under a prefix, for the tests; commands (apt-get, systemctl, docker) are
# not relocated, so outside a dry run it is only for trying the file-writing functions.

ROOT="${SPONSORBOT_INSTALL_ROOT:-}"
# The uid and gid the image's `sponsorbot` user has (Dockerfile): the owner of ./backups.
IMAGE_UID=10001
DATA_DIR=/var/lib/sponsorbot
# How long a restarted process has to stay up before the next one is restarted (tests: 0).
SETTLE_SECONDS=${SPONSORBOT_SETTLE_SECONDS:-5}

PLAN_TEXT=()
PLAN_CMD=()

say() { printf '%s\n' "$*"; }
warn() { printf 'warning: %s\n' "$*" >&2; }
die() {
	printf '%s: %s\n' "${PROG:-sponsorbot}" "$*" >&2
	exit 1
}

# step WHAT COMMAND [ARG...]: add a change to the plan (quoted now, run by run_plan).
step() {
	local what=$1
	shift
	PLAN_TEXT+=("$what")
	PLAN_CMD+=("$(printf '%q ' "$@")")
}

print_plan() {
	local i
	say ""
	say "The plan (nothing has been changed yet):"
	for i in "${!PLAN_TEXT[@]}"; do
		printf '  %2d. %s\n' "$((i + 1))" "${PLAN_TEXT[i]}"
	done
	say ""
}

# Stop after the plan on --dry-run; otherwise ask, unless --yes.
confirm_plan() {
	if [[ $DRY_RUN -eq 1 ]]; then
		say "dry run: nothing was changed"
		exit 0
	fi
	[[ $YES -eq 1 ]] && return 0
	[[ -t 0 ]] || die "not on a terminal: read the plan above and run again with --yes to carry it out"
	local answer
	read -r -p "Carry out this plan? [y/N] " answer
	[[ $answer == [yY] || $answer == [yY][eE][sS] ]] || die "stopped: nothing was changed"
}

# A warning the owner has to accept (--yes accepts it; a dry run only shows it).
accept_or_stop() {
	warn "$1"
	[[ $DRY_RUN -eq 1 || $YES -eq 1 ]] && return 0
	[[ -t 0 ]] || die "stopped at the warning above (--yes goes on regardless)"
	local answer
	read -r -p "Go on anyway? [y/N] " answer
	[[ $answer == [yY] || $answer == [yY][eE][sS] ]] || die "stopped: nothing was changed"
}

# Each step runs in a subshell with set -e, as a command of its own, and its status is read
# afterwards. Not `eval ... || die`: bash ignores set -e in everything run left of an || (the
# functions it calls included, and a subshell there even if it sets -e again), so a failing
# command inside a step would not stop it.
run_plan() {
	local i status total=${#PLAN_CMD[@]}
	for i in "${!PLAN_CMD[@]}"; do
		say "[$((i + 1))/$total] ${PLAN_TEXT[i]}"
		set +e
		(
			set -e
			eval "${PLAN_CMD[i]}"
		)
		status=$?
		set -e
		((status == 0)) || die "step $((i + 1)) failed: ${PLAN_TEXT[i]}"
	done
}

# env_get FILE KEY: a value from a .env file, read as text (the file is never run).
env_get() {
	[[ -r $1 ]] || return 0
	sed -n "s/^$2=//p" "$1" | tail -n 1 | sed -e 's/^"\(.*\)"$/\1/' -e "s/^'\(.*\)'$/\1/"
}

# warn_unreadable_env FILE: a dry run by a user who cannot read root's .env (mode 600) would
# plan with empty values; say so instead of misleading.
warn_unreadable_env() {
	if [[ -e $1 && ! -r $1 ]]; then
		warn "$1 cannot be read by this user: the values it holds (domain, workers, ports) are missing from the plan below; run the dry run with sudo to see the real one"
	fi
	return 0
}

# env_set FILE KEY VALUE: replace the key's line, or add it; the file keeps mode 600.
env_set() {
	local file=$1 key=$2 value=$3 tmp
	tmp=$(umask 077 && mktemp "$file.XXXXXX")
	awk -v k="$key" -v v="$value" '
		index($0, k "=") == 1 { if (!done) print k "=" v; done = 1; next }
		{ print }
		END { if (!done) print k "=" v }
	' "$file" >"$tmp"
	chmod 600 "$tmp"
	mv -f "$tmp" "$file"
}

# write_file MODE PATH CONTENT: write a whole file at once (through a temporary beside it).
write_file() {
	local mode=$1 path=$2 content=$3 tmp
	mkdir -p "$(dirname "$path")"
	tmp=$(umask 077 && mktemp "$path.XXXXXX")
	printf '%s' "$content" >"$tmp"
	chmod "$mode" "$tmp"
	mv -f "$tmp" "$path"
}

# A random secret of N bytes as hex: safe in URLs, .env files and shell words.
new_secret() {
	od -An -N "$1" -tx1 /dev/urandom | tr -d ' \n'
}

# The version a source tree or an install directory holds.
tree_version() {
	[[ -r $1/src/sponsorbot/__init__.py ]] || return 0
	sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$1/src/sponsorbot/__init__.py"
}

# The file the last step of a successful install or update writes: the version that runs. The
# tree can hold a newer one (an update that stopped after unpacking it); this file cannot.
VERSION_FILE=.installed-version

# running_version DIR: the version that runs from DIR; an install made before the file existed
# runs what its tree holds.
running_version() {
	if [[ -r $1/$VERSION_FILE ]]; then
		tr -d '[:space:]' <"$1/$VERSION_FILE"
	else
		tree_version "$1"
	fi
}

# record_version DIR VERSION: the last step of a successful install or update.
record_version() {
	write_file 644 "$1/$VERSION_FILE" "$2"$'\n'
	say "     Sponsorbot $2 runs (recorded in $1/$VERSION_FILE)"
}

# Docker Compose v2 (`docker compose`) when present, else Debian 12's docker-compose v1.
compose() {
	if docker compose version >/dev/null 2>&1; then
		(cd "$ROOT$DIR" && docker compose "$@")
	elif command -v docker-compose >/dev/null 2>&1; then
		(cd "$ROOT$DIR" && docker-compose "$@")
	else
		die "neither 'docker compose' nor 'docker-compose' is installed"
	fi
}

have_compose() {
	docker compose version >/dev/null 2>&1 || command -v docker-compose >/dev/null 2>&1
}

# The status code of GET PATH on 127.0.0.1:PORT, through bash's /dev/tcp (no curl needed).
http_status() {
	local port=$1 path=$2
	(
		{ exec 3<>"/dev/tcp/127.0.0.1/$port"; } 2>/dev/null || exit 1
		printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' "$path" >&3
		IFS=' ' read -r -t 5 _ code _ <&3 || exit 1
		printf '%s\n' "$code"
	)
}

# wait_healthy PORT SECONDS: until /healthz answers 200.
wait_healthy() {
	local port=$1 limit=$2 waited=0
	while [[ $(http_status "$port" /healthz || true) != 200 ]]; do
		((waited >= limit)) && die "no healthy answer on 127.0.0.1:$port/healthz after ${limit}s (see the logs)"
		sleep 2
		waited=$((waited + 2))
	done
	say "healthy: 127.0.0.1:$port/healthz answers 200"
}

# What a release copy leaves alone in the install directory: the owner's files and the venvs.
# `previous` is the release that ran before the last update, for update.sh --rollback (and
# previous.swap the one that runs, while a rollback swaps them).
RELEASE_KEPT=(.git .venv venv venv.new venv.old .env backups dist previous previous.swap "$VERSION_FILE")

# own_by_root PATH...: root runs what is there (update.sh, pip, the units, compose.yaml), so no
# one else may change it: owned by root, writable by no one else. A run without root (the
# tests' prefix) cannot give files away; --no-same-owner already made them its own.
own_by_root() {
	[[ $# -gt 0 ]] || return 0
	if [[ $EUID -eq 0 ]]; then chown -R root:root -- "$@"; fi
	chmod -R go-w -- "$@"
}

# The top-level entries of a release directory that a copy puts into the install directory.
release_entries() {
	local name kept
	while IFS= read -r -d '' name; do
		for kept in "${RELEASE_KEPT[@]}"; do
			[[ $name == "$kept" ]] && continue 2
		done
		printf '%s\0' "$name"
	done < <(find "$1" -mindepth 1 -maxdepth 1 -printf '%P\0')
}

# copy_release FROM TO: put a release's files into the install directory. The Python package
# and the wheels are replaced whole (a module dropped by the release must not linger in the next
# build, nor an old wheel beside the new); other files are overwritten in place, so files
# bind-mounted into containers keep their inode. The owner's files (.env, backups, the venv)
# are never touched. Root's tar would keep the owners the files had where the release was
# unpacked (often uid 1000): whoever that is could then change what root runs later, so they
# become root's. FROM may be TO (install.sh run from the install directory): then only the
# owners change.
copy_release() {
	local from=$1 to=$2 name
	local -a copied=() excluded=()
	mkdir -p "$to"
	if [[ $from -ef $to ]]; then
		to=$from
	else
		for name in "${RELEASE_KEPT[@]}"; do excluded+=("--exclude=./$name"); done
		rm -rf "$to/src" "$to/wheels"
		tar -C "$from" "${excluded[@]}" -cf - . |
			tar -C "$to" --overwrite --no-same-owner --no-same-permissions -xf -
	fi
	while IFS= read -r -d '' name; do copied+=("$to/$name"); done < <(release_entries "$from")
	# The directory itself too, but not what is kept in it (backups are the image's user's).
	if [[ $EUID -eq 0 ]]; then chown root:root "$to"; fi
	chmod go-w "$to"
	own_by_root "${copied[@]}"
}

# pip_install_release VENV TREE: Sponsorbot into VENV from a release tree: from the release's
# own wheels and lock when it has them (no package index, every file's hash checked), else
# from PyPI.
pip_install_release() {
	local venv=$1 tree=$2
	if [[ -f $tree/requirements.lock && -d $tree/wheels ]]; then
		PIP_CONFIG_FILE=/dev/null "$venv/bin/pip" install --quiet --no-index \
			--find-links "$tree/wheels" --require-hashes -r "$tree/requirements.lock"
	else
		"$venv/bin/pip" install --quiet --upgrade "$tree"
	fi
}

# Where pip takes Sponsorbot from, for the plans.
pip_source() {
	if [[ -f $1/requirements.lock && -d $1/wheels ]]; then
		printf "the release's wheels, hashes checked; no package index"
	else
		printf 'the package index'
	fi
}

# run_as_sponsorbot ARGS: a `sponsorbot` command with the services' user and settings, from the
# venv VENV names (default $DIR/venv). Its python runs the script, not the script's #! line:
# update.sh migrates with venv.new, whose scripts already name venv (see repoint_scripts).
run_as_sponsorbot() {
	local venv=${VENV:-$DIR/venv}
	systemd-run --quiet --wait --pipe --collect --uid=sponsorbot --gid=sponsorbot \
		-p "EnvironmentFile=$DIR/.env" -p "WorkingDirectory=$DATA_DIR" \
		-- "$venv/bin/python" "$venv/bin/sponsorbot" "$@"
}

# caddy_site DOMAIN UPSTREAM <TEMPLATE: the site file of a native install, from deploy/Caddyfile.
caddy_site() {
	sed -e "s/{\$SPONSORBOT_DOMAIN}/$1/g" -e "s/{\$SPONSORBOT_UPSTREAM}/$2/g"
}

# The worker instances enabled in systemd (their numbers), read from the wants directory.
enabled_workers() {
	local link
	for link in "$ROOT"/etc/systemd/system/multi-user.target.wants/sponsorbot-worker@*.service; do
		[[ -e $link || -L $link ]] || continue
		link=${link##*@}
		printf '%s\n' "${link%.service}"
	done | sort -n
}

# write_units TREE: the systemd units from a release tree, with the install directory put in
# when it is not /opt/sponsorbot; then systemd reads them again.
write_units() {
	local unit content
	for unit in sponsorbot-api.service sponsorbot-worker@.service; do
		content=$(sed "s#/opt/sponsorbot#$DIR#g" "$1/deploy/systemd/$unit")
		write_file 644 "$ROOT/etc/systemd/system/$unit" "$content"$'\n'
	done
	systemctl daemon-reload
}
