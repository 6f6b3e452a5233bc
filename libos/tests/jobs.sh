# Background jobs and signals between processes. A process that never
# makes a system call (a shell spinning in a builtin loop) is still reached
# by `kill`: the signal arrives as an interrupting transfer. (The shell's
# "Terminated" notices for background jobs come when it happens to look,
# on Linux too: those sections send them to /dev/null.)
{
sh -c 'while :; do :; done' &
spinner=$!
kill $spinner
wait $spinner; echo "spinner killed: $?"
} 2>/dev/null
kill -0 $spinner 2>/dev/null || echo "spinner gone"
rm -f /tmp/ready
sh -c 'trap "echo spinner caught USR1; exit 3" USR1; echo > /tmp/ready; while :; do :; done' &
p=$!
while [ ! -s /tmp/ready ]; do :; done
kill -USR1 $p
wait $p; echo "trapped: $?"
(sleep 1; echo background done) &
echo foreground first
wait
echo "all waited"
for i in 1 2 3; do (exit $i) & done
wait
{
sleep 5 & s=$!
kill -TERM $s
wait $s; echo "sleep killed: $?"
} 2>/dev/null
sh -c 'kill -TERM $$; echo not reached' ; echo "self TERM: $?"
{
rm -f /tmp/ready
setsid sh -c 'sh -c "while :; do :; done" & echo > /tmp/ready; while :; do :; done' &
g=$!
while [ ! -s /tmp/ready ]; do :; done
kill -TERM -$g
wait $g; echo "group killed: $?"
} 2>/dev/null
echo still here
# Stopping and continuing (job control's signals).
sleep 1 & p=$!
kill -STOP $p
sleep 0.5
echo "sleep stopped: $(cut -d' ' -f3 /proc/$p/stat)"
kill -CONT $p
wait $p; echo "continued, then ended: $?"
{
sh -c 'while :; do :; done' & p=$!
kill -STOP $p; sleep 0.3
echo "spinner: $(cut -d' ' -f3 /proc/$p/stat)"
kill -CONT $p; sleep 0.3
echo "spinner: $(cut -d' ' -f3 /proc/$p/stat)"
kill $p
wait $p; echo "continued spinner killed: $?"
} 2>/dev/null
