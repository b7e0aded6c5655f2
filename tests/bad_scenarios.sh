#!/bin/sh
# bad_scenarios.sh: the hostile-use catalogue (tests/data/bad/SCENARIOS): every command there, in a
# fresh copy of a prepared folder, exits as listed with its message, and changes no file but those
# it may write, there or outside (a folder reached through a symbolic link); nothing it runs
# creates a file (a CSV cell that ran `touch pwned` through gnuplot would).
set -u
src=${srcdir:-.}
src=$(cd "$src" && pwd)
CS=${COLLSIM:-$(pwd)/collsim}
case "$CS" in /*) ;; *) CS=$(pwd)/$CS ;; esac
SRC=$src
export CS SRC
cat=$src/tests/data/bad/SCENARIOS
[ -x "$CS" ] || { echo "bad_scenarios.sh: $CS not built" >&2; exit 99; }
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
fails=0
n=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# The prepared folder, and a folder outside it that link.d reaches.
base=$tmp/base
mkdir -p "$base" "$tmp/outside"
echo "not collsim's" >"$tmp/outside/keep.txt"
cp -R "$src/tests/data/bad/scenario/." "$base/"
"$CS" gen ring --gpus 4 -o "$base/r4.xml" || { echo "bad_scenarios.sh: gen ring failed" >&2; exit 99; }
cp "$src/platforms/a100-pcie-4gpu.xml" "$base/plat4.xml"
sed '0,/bandwidth="[^"]*"/s//bandwidth="1e-300Bps"/' "$base/plat4.xml" >"$base/tiny.xml"
cp "$src/tests/data/validation/oci-bmgpu48-a100sxm40-1node-8gpu.csv" "$base/m.csv"
printf 'm m.csv gen:ring:gpus=8 %s Simple sizes=1M:4M\n' "$src/platforms/dgx-a100.xml" >"$base/cases.txt"
cat >"$base/s.sweep" <<EOS
schedule = $src/tests/data/msccl-xml/allreduce_a100_pcie_hierarchical_fixed.4gpu.1inst.LL.xml
platform.family = a100-pcie-4gpu
protocol = LL
sizes = 1K..4K x4
EOS
(cd "$base" && "$CS" predict r4.xml -p plat4.xml -b 1M -e 1M --trace a.json >/dev/null) ||
    { echo "bad_scenarios.sh: predict --trace failed" >&2; exit 99; }
sed 's/"ts":\([0-9][0-9]*\.[0-9]*\)/"ts":1.7e308/' "$base/a.json" >"$base/huge.json"
ln -s r4.xml "$base/alias.xml"
ln -s ../outside "$base/link.d"

# What a folder holds: every path with its type, and a file's checksum or a link's target.
snapshot() {
    (cd "$1" && find . -mindepth 1 | LC_ALL=C sort | while IFS= read -r p; do
        if [ -L "$p" ]; then
            echo "$p link $(readlink "$p")"
        elif [ -d "$p" ]; then
            echo "$p dir"
        else
            echo "$p file $(cksum <"$p")"
        fi
    done)
}

tab=$(printf '\t')
while IFS="$tab" read -r name want msg may cmd; do
    case "$name" in '#'* | '') continue ;; esac
    n=$((n + 1))
    d=$tmp/run-$n
    rm -rf "$d" "$tmp/outside"
    mkdir -p "$tmp/outside"
    echo "not collsim's" >"$tmp/outside/keep.txt"
    cp -R "$base" "$d"
    snapshot "$d" >"$tmp/before"
    snapshot "$tmp/outside" >"$tmp/before-out"
    (cd "$d" && sh -c "$cmd" >"$tmp/out" 2>"$tmp/err" </dev/null)
    rc=$?
    [ "$rc" -eq "$want" ] || fail "$name: exit $rc, want $want: $(head -c 400 "$tmp/err")"
    [ "$rc" -lt 128 ] || fail "$name: died of a signal ($rc)"
    if [ "$msg" != "-" ]; then
        grep -q -F -- "$msg" "$tmp/err" || fail "$name: stderr lacks '$msg': $(head -c 400 "$tmp/err")"
    fi
    snapshot "$d" >"$tmp/after"
    # the paths it may write: whatever they are now, dropped from both lists (with what is in them)
    for p in $may; do
        [ "$p" = "-" ] && continue
        case "$p" in link.d/*) continue ;; esac
        grep -v -F -e "./$p " -e "./$p/" "$tmp/before" >"$tmp/b2"
        mv "$tmp/b2" "$tmp/before"
        grep -v -F -e "./$p " -e "./$p/" "$tmp/after" >"$tmp/a2"
        mv "$tmp/a2" "$tmp/after"
    done
    cmp -s "$tmp/before" "$tmp/after" ||
        fail "$name: changed its folder: $(diff "$tmp/before" "$tmp/after" | grep '^[<>]' | head -5 | tr '\n' ' ')"
    snapshot "$tmp/outside" >"$tmp/after-out"
    for p in $may; do
        case "$p" in link.d/*) q=${p#link.d/} ;; *) continue ;; esac
        grep -v -F "./$q " "$tmp/after-out" >"$tmp/a2"
        mv "$tmp/a2" "$tmp/after-out"
    done
    cmp -s "$tmp/before-out" "$tmp/after-out" ||
        fail "$name: changed a folder outside: $(diff "$tmp/before-out" "$tmp/after-out" | grep '^[<>]' | head -5 | tr '\n' ' ')"
    rm -rf "$d"
done <"$cat"

echo "bad_scenarios.sh: $n scenarios, $fails failures"
[ "$n" -ge 20 ] || { echo "bad_scenarios.sh: the catalogue lost its scenarios" >&2; exit 1; }
[ "$fails" -eq 0 ]
