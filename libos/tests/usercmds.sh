# What a new user types first (issue 29): df lists /, free and uptime
# read /proc, id names root and nobody, top draws its summary and the
# process list. Busybox's applets on both sides (the host's nice is
# coreutils': libos/tests/coreutils.sh). Values differ between systems, so
# each command's shape is printed.
busybox df / | awk 'NR == 1 { print "df header:", $1, $NF } NR == 2 { print "df mount:", $NF, ($2 > 0 ? "has blocks" : "no blocks") }'
busybox df -h / | awk 'NR == 2 { print "df -h mount:", $NF }'
busybox df | awk '$NF == "/" { print "df lists /" }'
busybox free | awk 'NR == 1 { print "free header:", $1, $2, $3 } NR == 2 { print "free row:", $1, ($2 > 0 ? "total" : "none") }'
busybox free -h | awk 'NR == 2 { print "free -h row:", $1, ($2 ~ /[KMGT]i?$/ ? "scaled" : $2) }'
busybox uptime | sed 's/.*\(load average\).*/\1/'
busybox id
busybox id -u; busybox id -g; busybox id -un; busybox id -gn
busybox id nobody
busybox top -b -n 1 | awk 'NR == 1 { print "top starts:", $1 } /PID/ { print "top has a process list"; exit }'
busybox top -b -n 1 | awk '/^CPU:/ { print "top CPU line:", $3, $5 }'
