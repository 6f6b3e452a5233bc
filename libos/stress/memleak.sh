# Stress (Veneer only): the leak check of tests/memleak.sh at the issue's
# full count: 10^4 fork/exec/wait cycles in one C parent, then 10^4
# commands in one shell; free memory must be back within 1% (about 8
# minutes of CPU under TCG).
exec /bin/sh /tests/memleak.sh 10000
