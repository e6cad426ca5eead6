#!/usr/bin/env bash
# Install Sponsorbot on a Debian (12+) or Ubuntu (22.04+) server, behind Caddy with HTTPS:
# with Docker Compose (the default), or with --native from Debian's postgresql and caddy
# packages, a virtual environment and systemd units for the api and N workers.
#
#   sudo ./install.sh --domain bot.example.com --email you@example.com [--workers 2]
#   sudo ./install.sh --native --domain bot.example.com --email you@example.com
#   sudo ./install.sh --native --behind-proxy --domain bot.example.com   # beside nginx/Apache
#   sudo ./install.sh --native --database-url postgresql://u:p@db.example.com/sponsorbot ...
#
# It checks the server first, then prints every change it would make and asks before making
# any (--yes does not ask; --dry-run prints the plan and stops). Running it again is safe: the
# .env and its secrets, the user, the database and its role are kept.
set -euo pipefail

PROG=install.sh
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=deploy/common.sh
. "$SRC/deploy/common.sh"

NATIVE=0
DOMAIN=""
EMAIL=""
WORKERS=""
API_PORT=""
DATABASE_URL=""
BEHIND_PROXY=0
DIR=/opt/sponsorbot
DRY_RUN=0
YES=0
# Filled by the checks, used by the plan.
PACKAGES=()
ENV_EXISTS=0
DOCKER_DAEMON=1

usage() {
	cat <<'EOF'
Usage: install.sh [--native] [--domain NAME] [--email ADDR] [--workers N] [--dir DIR]
                  [--api-port N] [--database-url URL] [--behind-proxy] [--dry-run] [--yes]

  --domain NAME       the panel's address; its DNS name must point at this server
  --email ADDR        the address Let's Encrypt writes to about the certificate
  --workers N         worker processes (default 2)
  --native            no Docker: Debian's postgresql and caddy, a venv, systemd units
  --dir DIR           where Sponsorbot lives (default /opt/sponsorbot)
  --api-port N        the api's port on 127.0.0.1 (default 8080; kept on a re-run)
  --database-url URL  native: an existing PostgreSQL 15+ (postgresql://user:pass@host/db)
                      instead of installing one here
  --behind-proxy      no Caddy: the web server this machine already runs (nginx, Apache)
                      forwards to the api; the block to give it is printed
  --dry-run           print the checks and the plan, change nothing
  --yes               do not ask (accept the warnings and the plan)
EOF
}

parse_args() {
	while [[ $# -gt 0 ]]; do
		case $1 in
		--native) NATIVE=1 ;;
		--domain | --email | --workers | --dir | --api-port | --database-url)
			[[ $# -ge 2 ]] || die "$1 needs a value"
			case $1 in
			--domain) DOMAIN=${2,,} ;;
			--email) EMAIL=$2 ;;
			--workers) WORKERS=$2 ;;
			--dir) DIR=${2%/} ;;
			--api-port) API_PORT=$2 ;;
			--database-url) DATABASE_URL=$2 ;;
			esac
			shift
			;;
		--behind-proxy) BEHIND_PROXY=1 ;;
		--dry-run) DRY_RUN=1 ;;
		--yes | -y) YES=1 ;;
		-h | --help)
			usage
			exit 0
			;;
		*) die "unknown option $1 (see --help)" ;;
		esac
		shift
	done
	[[ $DIR =~ ^/[A-Za-z0-9._/-]+$ ]] || die "--dir must be an absolute path of plain characters"
	if [[ -n $API_PORT ]]; then
		[[ $API_PORT =~ ^[0-9]{1,5}$ ]] || die "--api-port must be a port number from 1024 to 65535"
		API_PORT=$((10#$API_PORT))
		((API_PORT >= 1024 && API_PORT <= 65535)) || die "--api-port must be a port number from 1024 to 65535"
	fi
	if [[ -n $DATABASE_URL ]]; then
		[[ $NATIVE -eq 1 ]] || die "--database-url is for --native installs (a Docker install runs its own PostgreSQL)"
		# Written into .env and a systemd EnvironmentFile: no spaces, quotes or backslashes.
		[[ $DATABASE_URL =~ ^postgres(ql)?://[^[:space:]\'\"\\]+$ ]] ||
			die "--database-url must look like postgresql://user:password@host:5432/database"
	fi
}

# Values not given on the command line come from an existing .env, then from a question.
settle_values() {
	local env_file="$ROOT$DIR/.env"
	if [[ -e $env_file ]]; then
		ENV_EXISTS=1
		if [[ $NATIVE -eq 1 ]]; then
			[[ -n $DOMAIN ]] || DOMAIN=$(env_get "$env_file" SPONSORBOT_PUBLIC_URL | sed 's#^https://##')
		else
			[[ -n $DOMAIN ]] || DOMAIN=$(env_get "$env_file" SPONSORBOT_DOMAIN)
		fi
		[[ -n $EMAIL ]] || EMAIL=$(env_get "$env_file" SPONSORBOT_ACME_EMAIL)
		[[ -n $WORKERS ]] || WORKERS=$(env_get "$env_file" SPONSORBOT_WORKERS)
		if [[ -z $API_PORT ]]; then
			API_PORT=$(env_get "$env_file" "$(port_key)")
		fi
		[[ $(env_get "$env_file" BEHIND_PROXY) == yes ]] && BEHIND_PROXY=1
	fi
	API_PORT=${API_PORT:-8080}
	[[ -n $DOMAIN ]] || DOMAIN=$(ask "The panel's domain name (its DNS must point here)" --domain)
	# Behind another web server, Let's Encrypt is that server's business.
	[[ -n $EMAIL || $BEHIND_PROXY -eq 1 ]] || EMAIL=$(ask "Your email for Let's Encrypt" --email)
	WORKERS=${WORKERS:-2}
	DOMAIN=${DOMAIN,,}
	local label='[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?'
	[[ $DOMAIN =~ ^($label\.)*$label$ ]] || die "--domain is not a host name: $DOMAIN"
	[[ -z $EMAIL && $BEHIND_PROXY -eq 1 ]] ||
		[[ $EMAIL =~ ^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}$ ]] || die "--email is not an email address: $EMAIL"
	[[ $WORKERS =~ ^[0-9]{1,2}$ ]] || die "--workers must be 1 to 32"
	WORKERS=$((10#$WORKERS))
	((WORKERS >= 1 && WORKERS <= 32)) || die "--workers must be 1 to 32"
}

# The .env key that holds the api's port: compose.yaml publishes SPONSORBOT_API_PORT; the
# native units read SPONSORBOT_PORT.
port_key() {
	if [[ $NATIVE -eq 1 ]]; then echo SPONSORBOT_PORT; else echo SPONSORBOT_API_PORT; fi
}

# Sponsorbot never removes or overwrites what it did not make: --dir must be new, empty, this
# release itself, or an installation (it holds a Sponsorbot tree).
check_dir() {
	local dir=$ROOT$DIR
	if [[ ! -e $dir ]]; then
		say "ok   $DIR: new"
	elif [[ ! -d $dir ]]; then
		die "$DIR is a file, not a directory: choose another --dir"
	elif [[ $SRC -ef $dir || -n $(tree_version "$dir") ]]; then
		say "ok   $DIR: a Sponsorbot installation (a re-run)"
	elif [[ -n $(find "$dir" -mindepth 1 -maxdepth 1 ! -name .env ! -name backups -print -quit) ]]; then
		die "$DIR holds files that are not Sponsorbot's: install into a new or empty directory (--dir), Sponsorbot never overwrites what it did not make"
	else
		say "ok   $DIR: empty, or only a .env and backups of Sponsorbot's"
	fi
}

ask() {
	local answer
	[[ -t 0 && $YES -eq 0 ]] || die "$2 is needed"
	read -r -p "$1: " answer
	printf '%s' "$answer"
}

check_root() {
	[[ $EUID -eq 0 ]] && return 0
	[[ -n $ROOT ]] && return 0
	[[ $DRY_RUN -eq 1 ]] || die "run it as root (sudo ./install.sh ...)"
	say "note: not root; the checks that need root are partial and the real run needs sudo"
}

check_os() {
	local id version
	id=$(. /etc/os-release && printf '%s' "${ID:-}")
	version=$(. /etc/os-release && printf '%s' "${VERSION_ID:-0}")
	case $id in
	debian) dpkg --compare-versions "$version" ge 12 || die "Debian $version is too old: Debian 12 or newer is needed" ;;
	ubuntu)
		dpkg --compare-versions "$version" ge 22.04 || die "Ubuntu $version is too old: 22.04 or newer is needed"
		# The native install runs on the system's Python, and Sponsorbot needs 3.11.
		if [[ $NATIVE -eq 1 ]] && dpkg --compare-versions "$version" lt 24.04; then
			die "--native needs Ubuntu 24.04 or newer (Python 3.11+); use the Docker install here"
		fi
		;;
	*) die "this installer knows Debian and Ubuntu; /etc/os-release says '$id'" ;;
	esac
	say "ok   system: $id $version"
}

# check_port PORT OURS...: the port is free, or held by one of our own programs on a re-run;
# Caddy cannot do without 80 and 443, the api's port only draws a warning (it can move). A
# native install uses the Caddy it finds on 80 and 443: it adds our site to that one.
check_port() {
	local port=$1 line proc
	shift
	line=$(ss -H -ltnp 2>/dev/null | awk -v p=":$port" 'substr($4, length($4) - length(p) + 1) == p' | head -n 1 || true)
	if [[ -z $line ]]; then
		say "ok   port $port: free"
		return 0
	fi
	proc=$(sed -n 's/.*users:(("\([^"]*\)".*/\1/p' <<<"$line")
	if [[ $ENV_EXISTS -eq 1 ]] && [[ " $* " == *" $proc "* ]]; then
		say "ok   port $port: held by $proc of this installation (a re-run)"
		return 0
	fi
	if [[ $port == 80 || $port == 443 ]]; then
		if [[ $proc == caddy && $NATIVE -eq 1 ]]; then
			say "ok   port $port: held by this server's Caddy, which will serve Sponsorbot's site too"
			return 0
		fi
		if [[ $proc == caddy ]]; then
			die "port $port is taken by this server's Caddy: the Docker install runs a Caddy of its own, which needs 80 and 443 (install with --native to add Sponsorbot's site to the Caddy you have, or stop it)"
		fi
		die "port $port is taken by ${proc:-another program}: Caddy needs 80 and 443 for HTTPS (stop that service, or install with --behind-proxy and let it forward to Sponsorbot)"
	fi
	if [[ -z $proc && $EUID -ne 0 ]]; then
		warn "port $port is taken by a process this user cannot see (run the dry run with sudo to know which)"
		return 0
	fi
	accept_or_stop "port $port on this machine is taken by ${proc:-another program}; the api needs it (choose another with --api-port)"
}

# The server's own addresses: the source of its default route (a routing-table lookup; nothing
# is sent), and every global address.
server_addresses() {
	{
		ip -o route get 1.1.1.1 2>/dev/null | sed -n 's/.* src \([^ ]*\).*/\1/p'
		ip -o addr show scope global 2>/dev/null | awk '{ sub(/\/.*/, "", $4); print $4 }'
	} | sort -u
}

check_dns() {
	local resolved mine address
	resolved=$(timeout 10 getent ahosts "$DOMAIN" 2>/dev/null | awk '{ print $1 }' | sort -u || true)
	mine=$(server_addresses)
	if [[ -z $resolved ]]; then
		accept_or_stop "$DOMAIN does not resolve: point its A (and AAAA) record at this server first, or Let's Encrypt cannot issue a certificate"
		return 0
	fi
	for address in $resolved; do
		if grep -qxF "$address" <<<"$mine"; then
			say "ok   dns: $DOMAIN resolves to $address, an address of this server"
			return 0
		fi
	done
	accept_or_stop "$DOMAIN resolves to $(echo "$resolved" | tr '\n' ' ')but this server's addresses are $(echo "$mine" | tr '\n' ' ')(behind NAT the public address does not show here; otherwise fix the DNS record)"
}

package_installed() {
	[[ $(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true) == "install ok installed" ]]
}

check_docker() {
	if command -v docker >/dev/null 2>&1; then
		say "ok   docker: $(docker --version 2>/dev/null || echo present)"
	else
		PACKAGES+=(docker.io)
		say "--   docker: not installed; Debian's docker.io package will be"
	fi
	if have_compose; then
		say "ok   compose: present"
	else
		local id
		id=$(. /etc/os-release && printf '%s' "${ID:-}")
		# Ubuntu packages Compose v2 apart; Debian's docker-compose is v2 from Debian 13 on.
		if [[ $id == ubuntu ]]; then PACKAGES+=(docker-compose-v2); else PACKAGES+=(docker-compose); fi
		say "--   compose: not installed; the ${PACKAGES[-1]} package will be"
	fi
	# `docker info` would start a stopped daemon through its socket: a dry run only asks systemd.
	if [[ $DRY_RUN -eq 1 ]]; then
		if systemctl is-active --quiet docker 2>/dev/null; then
			say "ok   docker daemon: active in systemd (a real run checks it answers: docker info)"
		else
			DOCKER_DAEMON=0
			say "--   docker daemon: not active in systemd; a real run asks it (docker info) and enables and starts it if it does not answer"
		fi
	elif docker info >/dev/null 2>&1; then
		say "ok   docker daemon: running"
	else
		DOCKER_DAEMON=0
		say "--   docker daemon: not running; it will be enabled and started"
	fi
}

check_native() {
	local pkg
	local -a wanted=(python3-venv)
	if [[ -n $DATABASE_URL ]]; then wanted+=(postgresql-client); else wanted+=(postgresql); fi
	[[ $BEHIND_PROXY -eq 1 ]] || wanted+=(caddy)
	for pkg in "${wanted[@]}"; do
		if package_installed "$pkg"; then
			say "ok   package $pkg: installed"
		else
			PACKAGES+=("$pkg")
			say "--   package $pkg: will be installed"
		fi
	done
	if command -v python3 >/dev/null 2>&1 && ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
		die "Sponsorbot needs Python 3.11 or newer; this system's python3 is older"
	fi
	check_postgres_version
}

# The database Sponsorbot will use must be PostgreSQL 15 or newer: asked now when psql is here
# (and the local server runs), else by a step right after psql is installed, before any other.
check_postgres_version() {
	if [[ -n $DATABASE_URL ]]; then
		if command -v psql >/dev/null 2>&1; then
			postgres_version_ok external
		else
			say "--   database: psql is not installed yet; its version is checked right after it is"
		fi
	elif systemctl is-active --quiet postgresql 2>/dev/null && command -v psql >/dev/null 2>&1; then
		[[ $EUID -eq 0 ]] && postgres_version_ok local
	fi
	return 0
}

# postgres_version_ok external|local: die unless the server is PostgreSQL 15 or newer.
postgres_version_ok() {
	local number
	if [[ $1 == external ]]; then
		number=$(PGCONNECT_TIMEOUT=10 psql "$DATABASE_URL" -X -q -t -A -c 'SHOW server_version_num' 2>&1) ||
			die "the database at --database-url does not answer: ${number//$'\n'/ }"
	else
		number=$(runuser -u postgres -- psql -X -q -t -A -c 'SHOW server_version_num' 2>&1) ||
			die "the local PostgreSQL does not answer: ${number//$'\n'/ }"
	fi
	[[ $number =~ ^[0-9]+$ ]] || die "could not read the PostgreSQL version: $number"
	((number >= 150000)) ||
		die "the $1 PostgreSQL is version $((number / 10000)): Sponsorbot needs 15 or newer"
	say "ok   database: the $1 PostgreSQL is version $((number / 10000))"
}

warn_firewall() {
	if [[ $NATIVE -eq 0 ]]; then
		warn "Docker publishes container ports past ufw: its own iptables rules come first, so a published port is open to the internet whatever ufw says. compose.yaml therefore publishes the api on 127.0.0.1 only and the database not at all; only Caddy's 80 and 443 are public. Other containers on this server with published ports are exposed the same way: publish them on 127.0.0.1 too."
	fi
	if ufw_active; then
		say "note ufw is active: 80/tcp, 443/tcp and 443/udp will be allowed"
	fi
}

ufw_active() {
	command -v ufw >/dev/null 2>&1 && ufw status 2>/dev/null | grep -q '^Status: active'
}

# The .env of a Docker install: compose.yaml builds the database URL from POSTGRES_PASSWORD.
docker_env() {
	cat <<EOF
# Sponsorbot's settings (install.sh, $(date -u +%Y-%m-%d)). Keep this file private (mode 600):
# it holds the database password and the key that encrypts the bots' tokens. Keep a copy of
# SPONSORBOT_SECRET_KEY apart from the backups: without it a backup's tokens cannot be read.
# More settings: .env.example.
COMPOSE_PROJECT_NAME=sponsorbot
SPONSORBOT_DOMAIN=$DOMAIN
SPONSORBOT_PANEL_URL=https://$DOMAIN
SPONSORBOT_ACME_EMAIL=${EMAIL:-none@$DOMAIN}
SPONSORBOT_WORKERS=$WORKERS
SPONSORBOT_API_PORT=$API_PORT
$(proxy_env)
POSTGRES_PASSWORD=$(new_secret 24)
SPONSORBOT_SECRET_KEY=$(new_secret 32)
# /metrics answers a scraper that sends "Authorization: Bearer <this>" (from the host, requests
# reach the container through Docker's network, never as loopback).
SPONSORBOT_METRICS_TOKEN=$(new_secret 24)
EOF
}

native_env() {
	cat <<EOF
# Sponsorbot's settings (install.sh, $(date -u +%Y-%m-%d)), read by the systemd units. Keep
# this file private (mode 600): it holds the database password and the key that encrypts the
# bots' tokens. Keep a copy of SPONSORBOT_SECRET_KEY apart from the backups: without it a
# backup's tokens cannot be read. More settings: .env.example.
SPONSORBOT_DATABASE_URL=${DATABASE_URL:-postgresql://sponsorbot:$(new_secret 24)@127.0.0.1:5432/sponsorbot}
SPONSORBOT_SECRET_KEY=$(new_secret 32)
SPONSORBOT_PUBLIC_URL=https://$DOMAIN
SPONSORBOT_PANEL_URL=https://$DOMAIN
SPONSORBOT_HOST=127.0.0.1
SPONSORBOT_PORT=$API_PORT
SPONSORBOT_DATA_DIR=$DATA_DIR
# The web server in front runs on this machine: its X-Forwarded-For (the visitor's address)
# is believed, nobody else's.
SPONSORBOT_TRUSTED_PROXIES=127.0.0.1/32,::1/128
SPONSORBOT_ACME_EMAIL=$EMAIL
$(proxy_env)
SPONSORBOT_WORKERS=$WORKERS
# /metrics answers a scraper that sends "Authorization: Bearer <this>", on this machine too: the
# api believes 127.0.0.1 to be Caddy (above), so a request from loopback counts as proxied.
SPONSORBOT_METRICS_TOKEN=$(new_secret 24)
EOF
}

# BEHIND_PROXY=yes in .env: the install has no Caddy of its own (update.sh reads it too).
proxy_env() {
	if [[ $BEHIND_PROXY -eq 1 ]]; then
		printf '%s\n' "# No Caddy: the web server this machine runs forwards to the api (install.sh --behind-proxy)." "BEHIND_PROXY=yes"
	fi
}

# The .env: written new with fresh secrets, or kept with only the values given changed.
plan_env() {
	local env_file="$ROOT$DIR/.env" key value
	if [[ $ENV_EXISTS -eq 0 ]]; then
		local content
		if [[ $NATIVE -eq 1 ]]; then content=$(native_env); else content=$(docker_env); fi
		step "write $DIR/.env (mode 600) with a new database password and secret key" \
			write_file 600 "$env_file" "$content"$'\n'
		return 0
	fi
	local -a pairs=("SPONSORBOT_WORKERS=$WORKERS" "SPONSORBOT_PANEL_URL=https://$DOMAIN"
		"$(port_key)=$API_PORT")
	[[ -n $EMAIL ]] && pairs+=("SPONSORBOT_ACME_EMAIL=$EMAIL")
	[[ -n $DATABASE_URL ]] && pairs+=("SPONSORBOT_DATABASE_URL=$DATABASE_URL")
	[[ $BEHIND_PROXY -eq 1 ]] && pairs+=("BEHIND_PROXY=yes")
	if [[ $NATIVE -eq 1 ]]; then
		pairs+=("SPONSORBOT_PUBLIC_URL=https://$DOMAIN")
	else
		pairs+=("SPONSORBOT_DOMAIN=$DOMAIN")
	fi
	for key in "${pairs[@]}"; do
		value=${key#*=}
		key=${key%%=*}
		if [[ $(env_get "$env_file" "$key") != "$value" ]]; then
			# A database URL holds a password: the plan names the key only.
			local shown="$key=$value"
			[[ $key == SPONSORBOT_DATABASE_URL ]] && shown="$key (the --database-url given)"
			step "set $shown in the existing $DIR/.env" env_set "$env_file" "$key" "$value"
		fi
	done
	say "ok   $DIR/.env exists: kept, with its secrets"
}

plan_packages() {
	[[ ${#PACKAGES[@]} -gt 0 ]] || return 0
	step "apt-get update, then install Debian's ${PACKAGES[*]}" install_packages "${PACKAGES[@]}"
}

install_packages() {
	apt-get update -q
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"
}

plan_release_copy() {
	local installed ours
	ours=$(tree_version "$SRC")
	if [[ $SRC -ef $ROOT$DIR ]]; then
		step "make root the owner of Sponsorbot's files in $DIR (no one else may change what root runs)" \
			copy_release "$SRC" "$ROOT$DIR"
		return 0
	fi
	installed=$(tree_version "$ROOT$DIR")
	if [[ -n $installed && $installed != "$ours" ]]; then
		die "$DIR holds Sponsorbot $installed; this is $ours: update with ./update.sh --release <archive>"
	fi
	step "copy Sponsorbot $ours from $SRC into $DIR (owned by root)" copy_release "$SRC" "$ROOT$DIR"
}

plan_ufw() {
	ufw_active || return 0
	step "allow 80/tcp, 443/tcp and 443/udp in ufw" allow_web_in_ufw
}

allow_web_in_ufw() {
	ufw allow 80/tcp && ufw allow 443/tcp && ufw allow 443/udp
}

plan_docker() {
	plan_packages
	if [[ $DOCKER_DAEMON -eq 0 ]]; then
		step "enable and start the Docker daemon" systemctl enable --now docker
	fi
	plan_release_copy
	step "create $DIR/backups for the backups (owned by the image's user, uid $IMAGE_UID)" \
		install -d -m 0700 -o "$IMAGE_UID" -g "$IMAGE_UID" "$ROOT$DIR/backups"
	plan_env
	if [[ $BEHIND_PROXY -eq 1 ]]; then
		step "write the nginx block for your web server to $DIR/nginx-sponsorbot.conf" write_nginx_example
		step "build the image and start db, migrate, api and $WORKERS worker(s), no Caddy (docker compose up -d --build)" \
			compose up -d --build --scale "worker=$WORKERS" db migrate api worker
	else
		plan_ufw
		step "build the image and start db, migrate, api, $WORKERS worker(s) and caddy (docker compose up -d --build)" \
			compose up -d --build --scale "worker=$WORKERS"
	fi
	step "wait until the api answers on 127.0.0.1:$API_PORT/healthz" wait_healthy "$API_PORT" 180
	step "record that Sponsorbot $(tree_version "$SRC") runs ($DIR/$VERSION_FILE)" \
		record_version "$ROOT$DIR" "$(tree_version "$SRC")"
	step "print a one-time setup code for the panel (sponsorbot setup-code)" \
		print_setup_code compose exec -T api sponsorbot setup-code
}

# nginx_site DOMAIN PORT: the server block a web server in front of the api needs; the guide
# (01-install, "Installing beside nginx or Apache") shows the same, and Apache's equivalent.
nginx_site() {
	cat <<EOF
server {
    listen 443 ssl;
    listen [::]:443 ssl;
    server_name $1;
    ssl_certificate     /etc/letsencrypt/live/$1/fullchain.pem;
    ssl_certificate_key /etc/letsencrypt/live/$1/privkey.pem;

    client_max_body_size 51m;
    access_log off;

    location / {
        proxy_pass http://127.0.0.1:$2;
        proxy_set_header Host \$host;
        proxy_set_header X-Forwarded-For \$remote_addr;
        proxy_set_header X-Forwarded-Proto \$scheme;
        proxy_read_timeout 120s;
    }
}
EOF
}

# The example block is kept beside the installation, then printed with where it goes.
write_nginx_example() {
	write_file 644 "$ROOT$DIR/nginx-sponsorbot.conf" "$(nginx_site "$DOMAIN" "$API_PORT")"$'\n'
}

print_proxy_block() {
	[[ $BEHIND_PROXY -eq 1 ]] || return 0
	say ""
	say "Your web server forwards https://$DOMAIN to the api on 127.0.0.1:$API_PORT. For nginx,"
	say "this block (kept in $DIR/nginx-sponsorbot.conf) goes in /etc/nginx/sites-available/sponsorbot,"
	say "linked into sites-enabled/; set the certificate lines, then: nginx -t && systemctl reload nginx"
	say "(Apache: the guide's 01-install, \"Installing beside nginx or Apache\")"
	say ""
	nginx_site "$DOMAIN" "$API_PORT"
	say ""
}

# The main Caddyfile of the native install: the global options, and an import of our site.
caddy_main() {
	cat <<EOF
# Written by Sponsorbot's install.sh: the global options, then the sites in /etc/caddy.
{
	email $EMAIL
}

import /etc/caddy/sponsorbot.caddy
EOF
}

# What to do with /etc/caddy/Caddyfile: ours or the package's own is replaced; a Caddyfile
# someone wrote is kept and only gains the import line (and then no email option).
plan_caddy() {
	local main="$ROOT/etc/caddy/Caddyfile" stock current
	step "write /etc/caddy/sponsorbot.caddy (https://$DOMAIN to 127.0.0.1:$API_PORT)" \
		write_file 644 "$ROOT/etc/caddy/sponsorbot.caddy" "$(caddy_site "$DOMAIN" "127.0.0.1:$API_PORT" <"$SRC/deploy/Caddyfile")"$'\n'
	stock=$(dpkg-query -W -f='${Conffiles}' caddy 2>/dev/null | awk '$1 == "/etc/caddy/Caddyfile" { print $2 }' || true)
	current=""
	if [[ -e $main ]]; then current=$(md5sum <"$main" | cut -d' ' -f1); fi
	if [[ ! -e $main ]] || [[ -n $stock && $current == "$stock" ]] || grep -q "Sponsorbot's install.sh" "$main"; then
		step "write /etc/caddy/Caddyfile (global email option, import sponsorbot.caddy); the package's own is kept as Caddyfile.before-sponsorbot" \
			replace_caddy_main "$main" "$(caddy_main)"$'\n'
	elif grep -qF 'import /etc/caddy/sponsorbot.caddy' "$main"; then
		say "ok   /etc/caddy/Caddyfile already imports sponsorbot.caddy"
	else
		step "add 'import /etc/caddy/sponsorbot.caddy' to the end of your /etc/caddy/Caddyfile (kept otherwise)" \
			append_line "$main" 'import /etc/caddy/sponsorbot.caddy'
	fi
	step "check the Caddy configuration (caddy validate), enable Caddy and reload it" reload_caddy
}

replace_caddy_main() {
	if [[ -e $1 ]] && ! grep -q "Sponsorbot's install.sh" "$1"; then
		cp -p "$1" "$1.before-sponsorbot"
	fi
	write_file 644 "$1" "$2"
}

append_line() {
	printf '\n%s\n' "$2" >>"$1"
}

reload_caddy() {
	caddy validate --adapter caddyfile --config /etc/caddy/Caddyfile
	systemctl enable caddy
	systemctl reload-or-restart caddy
}

install_venv() {
	pip_install_release "$1" "$ROOT$DIR"
	own_by_root "$1"
}

# psql reads this on its input: the password is a psql variable, quoted by psql itself.
database_sql() {
	cat <<EOF
\\set ON_ERROR_STOP on
\\set pw '$1'
SELECT 'CREATE ROLE sponsorbot LOGIN' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'sponsorbot') \\gexec
ALTER ROLE sponsorbot WITH LOGIN PASSWORD :'pw';
SELECT 'CREATE DATABASE sponsorbot OWNER sponsorbot' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'sponsorbot') \\gexec
EOF
}

# The role's password is the one in .env (read when the step runs: .env may be new).
setup_database() {
	local password
	password=$(env_get "$ROOT$DIR/.env" SPONSORBOT_DATABASE_URL | sed -n 's#^postgresql://sponsorbot:\([0-9a-f]*\)@.*#\1#p')
	[[ -n $password ]] || die "$DIR/.env has no SPONSORBOT_DATABASE_URL with a password for the role sponsorbot"
	database_sql "$password" | runuser -u postgres -- psql -q -X
}

# Start (or restart, for new code) the api and workers 1..N; stop workers past N.
start_services() {
	local n
	systemctl enable sponsorbot-api.service
	systemctl restart sponsorbot-api.service
	for ((n = 1; n <= WORKERS; n++)); do
		systemctl enable "sponsorbot-worker@$n.service"
		systemctl restart "sponsorbot-worker@$n.service"
	done
	for n in $(enabled_workers); do
		((n > WORKERS)) && systemctl disable --now "sponsorbot-worker@$n.service"
	done
	return 0
}

plan_native() {
	local version extra
	version=$(tree_version "$SRC")
	plan_packages
	if [[ -n $DATABASE_URL ]] && ! command -v psql >/dev/null 2>&1; then
		step "check that the database at --database-url answers and is PostgreSQL 15 or newer" \
			postgres_version_ok external
	fi
	if getent passwd sponsorbot >/dev/null; then
		say "ok   user sponsorbot: exists"
	else
		step "create the system user sponsorbot (no login, home $DATA_DIR)" \
			useradd --system --user-group --home-dir "$DATA_DIR" --no-create-home --shell /usr/sbin/nologin sponsorbot
	fi
	step "create the data directory $DATA_DIR (mode 700, owned by sponsorbot)" \
		install -d -m 0700 -o sponsorbot -g sponsorbot "$ROOT$DATA_DIR"
	step "create $DATA_DIR/backups for the backups (mode 700, owned by sponsorbot)" \
		install -d -m 0700 -o sponsorbot -g sponsorbot "$ROOT$DATA_DIR/backups"
	plan_release_copy
	plan_env
	if [[ ! -x $ROOT$DIR/venv/bin/python ]]; then
		step "create the virtual environment $DIR/venv" python3 -m venv "$ROOT$DIR/venv"
	fi
	step "install Sponsorbot $version and its dependencies into $DIR/venv (pip, from $(pip_source "$SRC"); owned by root)" \
		install_venv "$ROOT$DIR/venv"
	if [[ -z $DATABASE_URL ]]; then
		step "enable and start PostgreSQL" systemctl enable --now postgresql
		step "check that the local PostgreSQL is version 15 or newer" postgres_version_ok local
		step "PostgreSQL: the role sponsorbot (made if missing; its password set to the one in .env) and the database sponsorbot (made if missing)" \
			setup_database
	fi
	step "install the units sponsorbot-api.service and sponsorbot-worker@.service into /etc/systemd/system" \
		write_units "$SRC"
	if [[ $BEHIND_PROXY -eq 1 ]]; then
		step "write the nginx block for your web server to $DIR/nginx-sponsorbot.conf" write_nginx_example
	else
		plan_caddy
		plan_ufw
	fi
	step "apply the database migrations (sponsorbot migrate, as the user sponsorbot)" run_as_sponsorbot migrate
	extra=$(enabled_workers | awk -v n="$WORKERS" '$1 > n' | tr '\n' ' ')
	step "enable and (re)start sponsorbot-api and sponsorbot-worker@1..$WORKERS${extra:+; stop and disable workers $extra}" \
		start_services
	step "wait until the api answers on 127.0.0.1:$API_PORT/healthz" wait_healthy "$API_PORT" 90
	step "record that Sponsorbot $version runs ($DIR/$VERSION_FILE)" record_version "$ROOT$DIR" "$version"
	step "print a one-time setup code for the panel (sponsorbot setup-code)" \
		print_setup_code run_as_sponsorbot setup-code
}

# The code is shown once; a workspace that already has an owner gets none (a re-run). Any other
# failure is shown as the command said it.
print_setup_code() {
	local out
	if out=$("$@" 2>&1); then
		say "$out"
	elif grep -qi "already has an owner" <<<"$out"; then
		say "(no setup code: the workspace already has an owner; sign in at https://$DOMAIN/signin)"
	else
		warn "no setup code: ${out//$'\n'/ }"
		say "(make one later with: sponsorbot setup-code, as the guide's 01-install shows)"
	fi
	print_proxy_block
	say ""
	say "Sponsorbot runs at https://$DOMAIN/ : open https://$DOMAIN/setup and enter the code."
	say "update.sh backs up before each update. Keep a copy of $DIR/.env somewhere else: its"
	say "SPONSORBOT_SECRET_KEY is needed to read the bot tokens in a backup."
}

main() {
	parse_args "$@"
	local mode=docker
	[[ $NATIVE -eq 1 ]] && mode=native
	say "Sponsorbot $(tree_version "$SRC") installer ($mode), into $DIR"
	check_root
	check_os
	check_dir
	warn_unreadable_env "$ROOT$DIR/.env"
	settle_values
	if [[ $BEHIND_PROXY -eq 0 ]]; then
		check_port 80 caddy docker-proxy
		check_port 443 caddy docker-proxy
	fi
	if [[ $NATIVE -eq 1 ]]; then
		check_port "$API_PORT" sponsorbot python3 python
		check_native
	else
		check_port "$API_PORT" docker-proxy
		check_docker
	fi
	check_dns
	[[ $BEHIND_PROXY -eq 1 ]] || warn_firewall
	if [[ $NATIVE -eq 1 ]]; then plan_native; else plan_docker; fi
	print_plan
	confirm_plan
	# The venv and the release must stay readable by the user sponsorbot; .env is made 600
	# by write_file whatever the umask.
	umask 022
	run_plan
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
	main "$@"
fi
