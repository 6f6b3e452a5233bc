# Running out of memory while a process forks (issue 27): the forker's
# children each take 256 KiB, and the machine runs out long before the
# environment table (4,096 slots) does. The forker is the largest process,
# the one the OOM killer would end: its fork fails with ENOMEM instead, and
# it stops. Until its children go, the shell uses only builtins (its own
# forks would fail the same way); one kill of the forker's process group
# (setsid made it one) then ends them all and the memory comes back.
# veneer-only
free_kib() { awk '/MemFree/ { print $2 }' /proc/meminfo; }
before=$(free_kib)
setsid /cbin/forkoom > /tmp/forkoom.out & forker=$!
wait $forker; status=$?
read -r line < /tmp/forkoom.out
echo "$line"
echo "forker: exit status $status"
kill -0 -$forker && echo "forkoom: its children live on"
kill -9 -$forker
case "$line" in
"forkoom: fork failed after "*" children: Cannot allocate memory") ;;
*) exit 1 ;;
esac
[ $status = 0 ] || exit 1
sleep 1
left=$(pidof forkoom | wc -w)
echo "forkoom: $left left after kill -9"
after=$(free_kib)
echo "free: $before -> $after KiB"
[ "$left" = 0 ] || exit 1
[ $after -ge $((before - before / 100)) ]
