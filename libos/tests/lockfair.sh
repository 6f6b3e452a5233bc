# A process making /proc calls back to back (what ps does) beside 40
# sleeping processes, and an uninvolved process napping 20 ms at a time:
# its worst nap ends within 1.5 s of its time (before the lock's release
# handed the CPU to a waiter it waited the whole run; 60-600 ms now on a
# busy host; libos/tests/c/lockfair.c). Veneer only: the figures (on
# stderr) are not the host's.
# veneer-only
cbin/lockfair 40 4 1500
