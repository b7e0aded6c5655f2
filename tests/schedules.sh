#!/bin/sh
# schedules.sh: the committed schedules/ equal what collsim generates now.
set -eu
exec "$CS_SRCDIR/scripts/gen-schedules" "$CS_BUILDDIR/collsim" "$CS_SRCDIR" --check
