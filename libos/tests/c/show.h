/* One line per call result, the same on Linux and Veneer: the value, or -1
 * and the errno's name. Shared by the tests whose output is compared with
 * the host's. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

static void show(const char *what, long r)
{
    if (r < 0)
        printf("%s: -1 %s\n", what, strerrorname_np(errno));
    else
        printf("%s: %ld\n", what, r);
}
