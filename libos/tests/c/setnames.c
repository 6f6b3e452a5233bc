#define _GNU_SOURCE
/* setdomainname and sethostname's limits (libos/tests/hostname.sh). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

int main(void)
{
    struct utsname u;
    setdomainname("example.org", 11);
    uname(&u);
    printf("domain: %s\n", u.domainname);
    static char long_name[65];
    memset(long_name, 'a', sizeof long_name);
    printf("65 bytes: %d\n", sethostname(long_name, 65) ? errno : 0);
    return 0;
}
