# Arguments checked as Linux checks them (libos/tests/c/argcheck.c): the
# errors each call's man page lists, for files, processes, limits,
# signals, clocks, memory and waits.
mkdir -p tmp
cbin/argcheck
echo "argcheck: $?"
