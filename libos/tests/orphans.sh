# host: pid namespace
# A killed parent whose children still run is reaped at once, and its
# orphans go to init (this shell, PID 1): `kill -9; wait` returns 137 at
# once, `ps` no longer lists the killed process, the orphan's parent is 1
# and init reaps it when it ends (libos/tests/c/orphans.c: a sleeping
# child, a zombie, a child blocked reading a pipe only its parent writes,
# and a grandchild that goes to init twice).
( sleep 1000; true ) & P=$!
sleep 1
kill -9 $P
# (ash reports the job "Killed" on stderr when the end reaches it inside
# `wait`, not before: timing, which differs between a loaded host and
# Linux's; the status is what is checked.)
wait $P 2>/dev/null
echo "wait: $?"
ps -o pid | grep -c "^ *$P\$"
ps -o ppid,args | while read ppid a b; do [ "$a $b" = "sleep 1000" ] && echo "orphan's parent: $ppid"; done
ps -o pid,args | while read pid a b; do [ "$a $b" = "sleep 1000" ] && kill $pid; done
sleep 1
ps -o args | grep -c "^sleep 1000"
cbin/orphans
echo "orphans: $?"
