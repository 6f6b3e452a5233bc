# Memory shared across fork (libos/tests/c/shmfork.c): MAP_SHARED
# anonymous and file pages, MAP_PRIVATE, a process-shared mutex and
# condition variable, a named semaphore (sem_open in /dev/shm), shm_open.
cbin/shmfork
echo "shmfork: $?"
