# A program's own signal handlers (busybox sh's `trap`): run when the
# signal arrives at the end of a call, or when it interrupts a blocked wait;
# `trap -` restores the default action; ignored signals stay ignored.
# (Shell errors come from `sh -c`: this script's path differs on the host.)
trap 'echo caught USR1' USR1
kill -USR1 $$
echo after USR1
kill -USR1 $$; kill -USR1 $$
echo after two
trap 'echo caught USR2; trap - USR2' USR2
kill -USR2 $$
sh -c 'trap "echo inner caught USR2" USR2; kill -USR2 $$; echo inner after'
echo "inner: $?"
(trap 'echo sub caught TERM; exit 7' TERM; sh -c 'kill -TERM $PPID'; echo sub not reached); echo "sub TERM: $?"
(trap 'echo sub caught INT; exit 8' INT; sh -c 'kill -INT $PPID'; echo sub not reached); echo "sub INT: $?"
(trap 'echo sub caught HUP' HUP; sh -c 'kill -HUP $PPID; exit 4'; echo "sub after HUP: $?"); echo "sub HUP: $?"
(trap 'echo handled' USR1; trap - USR1; sh -c 'kill -USR1 $PPID'; echo not reached); echo "default again: $?"
(trap '' TERM; sh -c 'kill -TERM $PPID'; echo "TERM ignored"); echo "ignored: $?"
sh -c 'trap "echo in sh: caught TERM; exit 9" TERM; sh -c "sleep 1; kill -TERM \$PPID" & wait'; echo "waiting sh: $?"
sh -c 'trap "echo trap EXIT" EXIT; trap "echo caught QUIT" QUIT; kill -QUIT $$; echo done'; echo "quit: $?"
x=0; trap 'x=$((x+1))' USR1; for i in 1 2 3 4 5; do kill -USR1 $$; done; echo "counted $x"
trap - USR1
sh -c 'kill -USR1 $$; echo not reached'; echo "USR1 default: $?"
echo still running
