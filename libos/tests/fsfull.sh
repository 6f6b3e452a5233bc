# The shared arena's file system filled to ENOSPC and emptied three times
# (issue 11, class 4): what is freed coalesces, so every refill holds as
# much as the first; a directory grows past 512 entries each time; and a
# full file system leaves the arena's reserve for pipes and directories,
# so the shell keeps running pipelines and making files' names.
# veneer-only
mkdir /tmp/full || exit 1
first=
for cycle in 1 2 3; do
  i=0; mkdir /tmp/dir
  while [ $i -lt 600 ]; do echo $i > /tmp/dir/entry$i || exit 1; i=$((i+1)); done
  n=$(/cbin/fill /tmp/full) || { echo "fill: not ENOSPC"; exit 1; }
  echo "cycle $cycle: $n MiB of files" | cat
  [ "$(echo piped | cat | cat)" = piped ] || { echo "no pipes when full"; exit 1; }
  touch /tmp/dir/one-more || exit 1
  [ $(ls /tmp/dir | wc -l) = 601 ] || exit 1
  : ${first:=$n}
  [ $n -ge $((first - 1)) ] || { echo "refill holds less: $n < $first"; exit 1; }
  [ $n -ge 40 ] || { echo "the file system holds only $n MiB"; exit 1; }
  rm -r /tmp/dir /tmp/full/* || exit 1
done
echo "free again" | cat
