#!/bin/sh
# install.sh: `make install DESTDIR=...` installs the program, the manual page, README and NEWS,
# and the platforms, docs, schedules and example sweeps under the package data folder, which the
# page names; `make uninstall` removes every file again.
set -u
src=${CS_SRCDIR:?}
b=${CS_BUILDDIR:?}
. "$src/tests/lib.sh"
unset MAKEFLAGS MFLAGS MAKELEVEL
root=$tmp/root

${MAKE:-make} -s -C "$b" install DESTDIR="$root" >"$tmp/log" 2>&1 || {
    cat "$tmp/log"
    fail "make install"
}
bin=$(find "$root" -path '*/bin/collsim' -type f)
[ -n "$bin" ] && [ -x "$bin" ] || fail "no bin/collsim"
"$bin" --version | grep -q '^collsim [0-9]' || fail "the installed collsim does not run"
man=$(find "$root" -path '*/man/man1/collsim.1' -type f)
[ -n "$man" ] || fail "no man1/collsim.1"
data=$(find "$root" -type d -path '*/share/collsim' | head -n 1)
[ -n "$data" ] || fail "no share/collsim"
grep -q "^\.I ${data#"$root"}/platforms/\$" "$man" || fail "the page does not name $data"
for f in "$src"/platforms/* "$src"/docs/* "$src"/schedules/*.xml "$src"/results/sweeps/*.sweep; do
    rel=${f#"$src"/}
    case $rel in
    results/sweeps/*) want=$data/sweeps/${rel##*/} ;;
    *) want=$data/$rel ;;
    esac
    cmp -s "$f" "$want" || fail "$rel not installed as ${want#"$root"}"
done
for f in README NEWS; do
    find "$root" -path "*/doc/collsim/$f" -type f | grep -q . || fail "no doc/collsim/$f"
done
# an installed example sweep lists its points with the installed program
"$bin" sweep --list "$data/sweeps/hier-pcie.sweep" --shard-dir "$tmp/shards" >"$tmp/points" ||
    fail "the installed hier-pcie.sweep does not list"
[ "$(wc -l <"$tmp/points")" -eq 18 ] || fail "the installed hier-pcie.sweep has not 18 points"

${MAKE:-make} -s -C "$b" uninstall DESTDIR="$root" >"$tmp/log" 2>&1 || {
    cat "$tmp/log"
    fail "make uninstall"
}
left=$(find "$root" -type f)
[ -z "$left" ] || fail "uninstall left: $left"
[ "$fails" -eq 0 ] || exit 1
echo "install: ok"
