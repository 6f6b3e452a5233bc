# A process making /proc calls back to back (what ps does) beside 40
# sleeping processes, and an uninvolved process napping 20 ms at a time:
# its worst nap ends within 1 s of its time (before the lock's release
# handed the CPU to a waiter: 11 naps in 4 s, the worst 2 s late; after:
# 10-60 ms; libos/tests/c/lockfair.c). Veneer only: the figures (on
# stderr) are not the host's.
# veneer-only
cbin/lockfair 40 4 1000
