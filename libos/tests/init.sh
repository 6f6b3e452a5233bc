# The script's shell is init, PID 1 (the host runs it as PID 1 of a new
# PID namespace, which Linux treats the same way):
# host: pid namespace
# its pid and its children's parent, init surviving SIGKILL, SIGTERM,
# SIGSTOP and SIGHUP sent by a child (Linux ignores signals to init that
# it has no handler for) and its own SIGKILL, while the handler it set
# for SIGUSR1 runs; /proc and ps show it as process 1 with parent 0.
echo "shell: pid $$, parent $PPID"
sh -c 'echo "child: pid $$, parent $PPID"'
trap 'echo init got USR1' USR1
sh -c 'kill -KILL 1; echo "kill -KILL 1: $?"; kill -TERM 1; echo "kill -TERM 1: $?"; kill -STOP 1; echo "kill -STOP 1: $?"; kill -HUP 1; kill -USR1 1; echo "kill -USR1 1: $?"'
echo "init carries on"
kill -KILL $$
echo "init survives its own SIGKILL"
cut -d' ' -f1,4-6 /proc/1/stat
ps -o pid,ppid,pgid | awk '$1 == 1'
sh -c 'kill -0 1 && echo "kill -0 1: found"'
sh -c 'kill -TERM -1; echo "kill -TERM -1 from a child: $?"'
echo "init carries on after kill -1"
