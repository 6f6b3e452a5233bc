# poll through busybox's `read -t` (it polls its input before every byte):
# a wait that data ends, one that times out, and pipes read after a wait.
# Waits that data ends allow 60 s (it comes in well under a second; a
# loaded host running TCG has taken seconds to start a subshell): only a
# wakeup that never comes reaches the bound. The writer of the wait that
# times out holds its data until the reader has timed out (a fifo), not
# for a time that a slow reader's start could outlast.
{ sleep 0.3; echo hello; } | { read -t 60 x; echo "woken: $? $x"; }
mkfifo tmp/timedout
{ read go < tmp/timedout; echo late; } | { read -t 0.2 x; echo "timed out: $? [$x]"; echo go > tmp/timedout; read x; echo "then: $x"; }
rm tmp/timedout
printf 'one\ntwo\n' | { read -t 60 a; read -t 60 b; echo "ready: $a $b"; }
{ sleep 0.2; echo a; sleep 0.2; echo b; } | { read -t 60 x; read -t 60 y; echo "twice: $x $y"; }
: | { read -t 60 x; echo "end of file: $? [$x]"; }
