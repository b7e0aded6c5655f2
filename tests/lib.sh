# lib.sh: what the shell tests share, sourced after they set their own variables: a temporary
# folder $tmp removed at exit, and fail(), which reports a failure and counts it in $fails.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

fail() {
    echo "FAIL: $*" >&2
    fails=$((fails + 1))
}
