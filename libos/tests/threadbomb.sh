# A thread bomb across processes (libos/tests/c/threadbomb.c): 2, 8 and
# 17 processes each make threads until pthread_create fails, their threads
# napping 50 ms in a loop; a process forked once they have made them
# (on Veneer: with no time slice left) naps on time, and the shell's own
# sleep ends beside them. Every thread is joined.
cbin/threadbomb 2
cbin/threadbomb -d 8 &
sleep 1
echo "the shell slept beside 8 thread bombs"
wait
cbin/threadbomb 17
