# Memory exhaustion (issue 11, class 5), as Linux handles it: a mapping or
# brk larger than the machine's memory fails with ENOMEM; a program that
# touches memory until none is left is killed with SIGKILL and a console
# line naming it, while another process keeps running pipelines, and the
# memory comes back. A process that needs memory while another holds it
# all (and sleeps) gets it: the largest process is killed for it.
# veneer-only
# log: lxrt: out of memory: killed process
/cbin/hog map || exit 1
free_kib() { awk '/MemFree/ { print $2 }' /proc/meminfo; }
before=$(free_kib)
rm -f /tmp/stop
# Three workers: each page one of them needs while the hog dies races the
# hog's end (an innocent worker was once killed with the hog's memory free).
workers=
for w in 1 2 3; do
  ( n=0; until [ -e /tmp/stop ]; do [ "$(echo ok | cat)" = ok ] || exit 1; n=$((n+1)); done; echo "worker $w: $n pipelines" >&2; [ $n -gt 0 ] ) &
  workers="$workers $!"
done
/cbin/hog touch; status=$?
echo "hog: exit status $status"
: > /tmp/stop
for w in $workers; do wait $w || { echo "a worker failed"; exit 1; }; done
[ $status = 137 ] || exit 1
rm -f /tmp/held
/cbin/hog hold 3000 /tmp/held & hog=$!
while [ ! -e /tmp/held ] && kill -0 $hog 2>/dev/null; do :; done
[ -e /tmp/held ] || { echo "the holding hog died before it held"; exit 1; }
# 8 MiB more than is free: only the holding hog's death provides them.
/cbin/hog eat 8 || { echo "no memory for a small program"; exit 1; }
[ "$(echo ok | cat)" = ok ] || { echo "no memory for a pipeline"; exit 1; }
wait $hog; status=$?
echo "holding hog: exit status $status"
[ $status = 137 ] || exit 1
after=$(free_kib)
echo "free: $before -> $after KiB"
[ $after -ge $((before - before / 100)) ]
