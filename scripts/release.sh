#!/usr/bin/env bash
# Build the release archive dist/sponsorbot-<version>.tar.gz (and its .sha256) from the
# committed HEAD of the repository this is run in: `git archive`, so nothing untracked or
# uncommitted goes in.
#
# Two lessons are checked rather than trusted: git archive writes CRLF into text files when
# core.eol says so (Git for Windows does), which would ship install.sh broken, so the archive
# is made with core.eol=lf and every text file in it is checked for carriage returns; and the
# scripts must stay executable.
#
# The archive also carries wheels/, every wheel Sponsorbot needs on Linux x86-64 for the Pythons
# a native install meets (3.11 on Debian 12, 3.12 on Ubuntu 24.04, 3.13 on Debian 13), and
# requirements.lock naming each with its SHA-256: install.sh --native and update.sh install from
# them with --no-index --require-hashes, so a server needs no PyPI (unreachable from some
# countries) and gets exactly the files released. Building them needs the package index, once.
#
#   scripts/release.sh                   # the archive with the wheels for 3.11, 3.12 and 3.13
#   scripts/release.sh --python 3.11     # the wheels for one Python only (repeatable)
#   scripts/release.sh --no-wheels       # the sources alone (installs then need PyPI)
set -euo pipefail

die() {
	printf 'release.sh: %s\n' "$*" >&2
	exit 1
}

WHEELS=1
PYTHONS=()
while [[ $# -gt 0 ]]; do
	case $1 in
	--no-wheels) WHEELS=0 ;;
	--python)
		[[ $# -ge 2 && $2 =~ ^3\.[0-9]{1,2}$ ]] || die "--python needs a version such as 3.11"
		PYTHONS+=("$2")
		shift
		;;
	*) die "unknown option $1 (--python X.Y, --no-wheels)" ;;
	esac
	shift
done
[[ ${#PYTHONS[@]} -gt 0 ]] || PYTHONS=(3.11 3.12 3.13)

cd "$(git rev-parse --show-toplevel 2>/dev/null)" || die "not inside a git repository"
git rev-parse --verify --quiet HEAD >/dev/null || die "the repository has no commit yet"
version=$(git show HEAD:src/sponsorbot/__init__.py | sed -n 's/^__version__ = "\(.*\)"$/\1/p')
[[ -n $version ]] || die "no __version__ in the committed src/sponsorbot/__init__.py"
name="sponsorbot-$version"
if [[ -n $(git status --porcelain) ]]; then
	printf 'release.sh: note: uncommitted changes are not in the release (it is HEAD, %s)\n' \
		"$(git rev-parse --short HEAD)" >&2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git -c core.eol=lf -c core.autocrlf=false archive --format=tar --prefix="$name/" -o "$work/$name.tar" HEAD
mkdir "$work/tree"
tar -C "$work/tree" -xf "$work/$name.tar"

# Carriage returns in any text file (grep -I passes over binary files); counted with tr, which
# sees every \r whatever the platform's grep does with line endings.
bad=()
while IFS= read -r -d '' file; do
	if [[ $(tr -cd '\r' <"$file" | wc -c) -gt 0 ]]; then
		bad+=("${file#"$work/tree/$name/"}")
	fi
done < <(find "$work/tree/$name" -type f -exec grep -IlZ '' {} +)
if [[ ${#bad[@]} -gt 0 ]]; then
	die "CR line endings in: ${bad[*]} (commit them with LF; .gitattributes asks for it)"
fi

# Every script (a .sh file starting with #!; a library to source has none) keeps its
# executable bit, as recorded in the archive itself.
listing=$(tar -tvf "$work/$name.tar")
not_exec=()
while IFS= read -r file; do
	[[ -n $file && $(head -c 2 "$work/tree/$file") == "#!" ]] && not_exec+=("$file")
done < <(awk '$NF ~ /\.sh$/ && substr($1, 4, 1) != "x" { print $NF }' <<<"$listing")
if [[ ${#not_exec[@]} -gt 0 ]]; then
	die "scripts without their executable bit: ${not_exec[*]} (git update-index --chmod=+x)"
fi
if awk '$NF ~ /(^|\/)\.env$/ { found = 1 } END { exit !found }' <<<"$listing"; then
	die "a .env file is committed: it must never ship"
fi

# wheelhouse TREE: the project's wheel and every dependency's, for each Python in PYTHONS, and
# the lock naming them (a marker per Python, where their versions differ).
wheelhouse() {
	local tree=$1 py
	mkdir -p "$tree/wheels"
	python3 -m pip wheel --quiet --no-deps --wheel-dir "$tree/wheels" "$tree" ||
		die "could not build Sponsorbot's own wheel"
	for py in "${PYTHONS[@]}"; do
		python3 -m pip download --quiet --dest "$work/py$py" --only-binary=:all: \
			--implementation cp --python-version "$py" --abi "cp${py/./}" --abi abi3 --abi none \
			--platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
			--platform manylinux2014_x86_64 --platform manylinux_2_5_x86_64 \
			--platform manylinux1_x86_64 --platform linux_x86_64 \
			"$tree"/wheels/sponsorbot-*.whl ||
			die "could not download the wheels for Python $py (is the package index reachable?)"
		cp -n "$work/py$py"/*.whl "$tree/wheels/"
	done
	python3 - "$tree" "$work" "${PYTHONS[@]}" <<'EOF'
"""requirements.lock: name==version ; python_version == "X.Y" --hash=sha256:... per wheel."""
import hashlib
import re
import sys
from pathlib import Path

tree, work, pythons = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:]
lines = ["# Every wheel in wheels/, by the Python it is for; pip install --require-hashes checks each."]
for py in pythons:
    pins: dict[tuple[str, str], list[str]] = {}
    for wheel in sorted((work / f"py{py}").glob("*.whl")):
        name, version = wheel.name.split("-")[:2]
        name = re.sub(r"[-_.]+", "-", name).lower()
        digest = hashlib.sha256((tree / "wheels" / wheel.name).read_bytes()).hexdigest()
        pins.setdefault((name, version), []).append(digest)
    for (name, version), digests in sorted(pins.items()):
        hashes = " ".join(f"--hash=sha256:{d}" for d in digests)
        lines.append(f'{name}=={version} ; python_version == "{py}" {hashes}')
(tree / "requirements.lock").write_text("\n".join(lines) + "\n")
EOF
}

if [[ $WHEELS -eq 1 ]]; then
	wheelhouse "$work/tree/$name"
	# The tree again, with the wheels, as git archive made it: sorted, owned by root, dated by
	# the commit.
	tar -C "$work/tree" --sort=name --owner=0 --group=0 --numeric-owner \
		--mtime="@$(git log -1 --format=%ct)" -cf "$work/$name.tar" "$name"
	printf 'release.sh: wheels for Python %s: %s files\n' "${PYTHONS[*]}" \
		"$(find "$work/tree/$name/wheels" -name '*.whl' | wc -l)" >&2
fi

mkdir -p dist
gzip -9 -n <"$work/$name.tar" >"dist/$name.tar.gz"
(cd dist && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")
printf 'dist/%s.tar.gz\ndist/%s.tar.gz.sha256\n' "$name" "$name"
