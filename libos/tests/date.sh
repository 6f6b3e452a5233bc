# The date is the machine's (issue 29: every boot said 1 January 2024): the
# kernel reads the CMOS real-time clock, which QEMU sets from the host's
# clock, and the library's wall time (date, clock_gettime through the
# vDSO and the system call, file times) starts from it. The month is
# compared (the host's side runs a little earlier).
date -u +%Y-%m
mkdir -p tmp && touch tmp/date.file
[ $(( $(date +%s) - $(stat -c %Y tmp/date.file) )) -le 2 ] && echo "a new file's time is now"
