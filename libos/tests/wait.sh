# poll through busybox's `read -t` (it polls its input before every byte):
# a wait that data ends, one that times out, and pipes read after a wait.
{ sleep 0.3; echo hello; } | { read -t 5 x; echo "woken: $? $x"; }
{ sleep 1; echo late; } | { read -t 0.2 x; echo "timed out: $? [$x]"; read x; echo "then: $x"; }
printf 'one\ntwo\n' | { read -t 1 a; read -t 1 b; echo "ready: $a $b"; }
{ sleep 0.2; echo a; sleep 0.2; echo b; } | { read -t 3 x; read -t 3 y; echo "twice: $x $y"; }
: | { read -t 1 x; echo "end of file: $? [$x]"; }
