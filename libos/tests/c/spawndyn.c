// link: dynamic
/* spawn.c, dynamically linked against glibc (its test needs libc6). */
#include "spawn.c"
