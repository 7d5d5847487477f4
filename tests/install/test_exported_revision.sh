#!/usr/bin/env bash
# versions.git is this project's revision, never that of a repository its source folder sits in
# (cmake/write_build_info.cmake). The checkout's HEAD is exported as `git archive` writes it
# (.scalebench-revision filled in, export-subst) and unpacked inside another git repository: the
# build info gives the exported commit and "export". The same files without that revision give
# "unknown" and "none". Neither ever gives the enclosing repository's commit; the checkout itself
# gives its own HEAD and "checkout". Skips (77) where the source folder is no checkout of its own.
#   test_exported_revision.sh SOURCE_DIR SCRATCH_DIR
set -euo pipefail
src="$1"
scratch="$2"
fail() { echo "FAIL: $*" >&2; exit 1; }
top=$(git -C "$src" rev-parse --show-toplevel 2>/dev/null || true)
if [ -z "$top" ] || [ "$(realpath "$top")" != "$(realpath "$src")" ]; then
  echo "skipped: $src is not the top of its own git checkout (nothing to export)"
  exit 77
fi
rm -rf "$scratch"
mkdir -p "$scratch/outer"
git() { command git -c user.name=test -c user.email=test@example.invalid -c init.defaultBranch=main "$@"; }
git -C "$scratch/outer" init -q
echo "an enclosing repository" >"$scratch/outer/README"
git -C "$scratch/outer" add README
git -C "$scratch/outer" commit -q -m "enclosing repository"
outer_hash=$(git -C "$scratch/outer" rev-parse --short=12 HEAD)
git -C "$src" archive --format=tar --prefix=scalebench/ HEAD | tar -x -C "$scratch/outer"
exported="$scratch/outer/scalebench"

# build_info.cpp for source folder $1 (as ScalebenchVersion.cmake writes it), to file $2.
build_info() {
  cmake -DSRC="$1" -DOUT="$2" -DVERSION=0.0.0 -DCUDA=OFF -DCOMPILER=test -DBUILD_TYPE=Release \
    -P "$src/cmake/write_build_info.cmake"
}
says() {  # says <file> <function> <value>
  grep -qF "$2() { return \"$3\"; }" "$1" || fail "$1: $2 is not \"$3\": $(grep -F "$2()" "$1")"
}

head_full=$(git -C "$src" rev-parse HEAD)
head=$(git -C "$src" rev-parse --short=12 HEAD)
[ "$(cat "$exported/.scalebench-revision")" = "$head_full" ] ||
  fail "git archive did not write the commit into .scalebench-revision: $(head -c 200 "$exported/.scalebench-revision")"
build_info "$exported" "$scratch/exported.cpp"
says "$scratch/exported.cpp" build_git_hash "$head"
says "$scratch/exported.cpp" build_git_source export
echo "exported inside another repository (its commit $outer_hash): git $head, source export"

rm "$exported/.scalebench-revision"
build_info "$exported" "$scratch/bare.cpp"
says "$scratch/bare.cpp" build_git_hash unknown
says "$scratch/bare.cpp" build_git_source none
if grep -q "$outer_hash" "$scratch/exported.cpp" "$scratch/bare.cpp"; then fail "the enclosing repository's commit was taken"; fi
echo "the same files without the revision: git unknown, source none"

build_info "$src" "$scratch/checkout.cpp"
grep -qE "build_git_hash\(\) \{ return \"$head(-dirty)?\"; \}" "$scratch/checkout.cpp" ||
  fail "the checkout's hash is not its HEAD $head: $(grep -F 'build_git_hash()' "$scratch/checkout.cpp")"
says "$scratch/checkout.cpp" build_git_source checkout
echo "the checkout: git $head, source checkout"
