# Setting the wall clock (clock_settime, settimeofday: ENOSYS before;
# CPython's test_clock_settime and test_monotonic_settime failed). Every
# process is root, so the clock moves: for this process, its children, the
# vDSO's readers and new files; the monotonic clock does not. (Veneer
# only: the host's clock is not this test's to set.)
# veneer-only
# log: date -s: 0
# log: 2030-06-15 12
# log: an hour back: 60 minutes
# log: monotonic unmoved: True
# log: CLOCK_MONOTONIC: 22
date -s '2030-06-15 12:00:00' > /dev/null; echo "date -s: $?"
date '+%Y-%m-%d %H'
sh -c 'date +%Y'
mkdir -p tmp && touch tmp/settime.file && stat -c %y tmp/settime.file | cut -c1-4
/usr/bin/python3.11 -c '
import time
m = time.monotonic()
r = time.clock_gettime(time.CLOCK_REALTIME)
time.clock_settime(time.CLOCK_REALTIME, r - 3600)
print("an hour back:", round((r - time.time()) / 60), "minutes")
print("monotonic unmoved:", time.monotonic() >= m)
try:
    time.clock_settime(time.CLOCK_MONOTONIC, 0)
except OSError as e:
    print("CLOCK_MONOTONIC:", e.errno)
'
# with: python3.11
