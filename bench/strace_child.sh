#!/usr/bin/env bash
# Runs a serving candidate child under `strace -f`, one log per child in $STRACE_OUT, for
# bench/system_call_survey.py. As $PTXBENCH_CANDIDATE (or an A/A --candidate) it runs
# $REAL_CANDIDATE; linked as `python3` on PATH it traces `python3 -m ptxbench_triton.child` and
# runs every other Python command as $REAL_PYTHON would.
set -u
strace=${STRACE:-strace}
log="$STRACE_OUT/child.$$"
if [ "$(basename "$0")" = python3 ]; then
  case " $* " in
    *" ptxbench_triton.child "*) exec "$strace" -f -o "$log.triton" "$REAL_PYTHON" "$@" ;;
    *) exec "$REAL_PYTHON" "$@" ;;
  esac
fi
exec "$strace" -f -o "$log" "$REAL_CANDIDATE" "$@"
