# Guest time against the host's: busybox `sleep 3` (nanosleep) must take
# 3 s of the host's wall time too, within 25% (the harness times the two
# lines on the console; under plain TCG QEMU's virtual clock is the host's).
# wall: 3 | time: start | time: end
echo time: start
sleep 3
echo time: end
