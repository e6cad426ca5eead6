#!/usr/bin/env bash
# Build the release archive dist/sponsorbot-<version>.tar.gz (and its .sha256) from the
# committed HEAD of the repository this is run in: `git archive`, so nothing untracked or
# uncommitted goes in.
#
# Two lessons are checked rather than trusted: git archive writes CRLF into text files when
# core.eol says so (Git for Windows does), which would ship install.sh broken, so the archive
# is made with core.eol=lf and every text file in it is checked for carriage returns; and the
# scripts must stay executable.
set -euo pipefail

die() {
	printf 'release.sh: %s\n' "$*" >&2
	exit 1
}

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

mkdir -p dist
gzip -9 -n <"$work/$name.tar" >"dist/$name.tar.gz"
(cd dist && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")
printf 'dist/%s.tar.gz\ndist/%s.tar.gz.sha256\n' "$name" "$name"
