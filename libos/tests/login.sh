# The login path (issue 25): /etc/passwd, /etc/group and /etc/shadow name
# a second user, and busybox `su` run by root becomes it (no password is
# asked of root). As that user nothing of root's is reachable: the
# password hashes (0600), root's files, init; and `su` back to root fails
# even though root's password is empty, since a user cannot set uid 0
# (Veneer runs no set-user-ID programs).
# veneer-only
bad=0
fail() { echo "FAIL: $*"; bad=1; }
[ "$(su -c 'id -u; id -g; whoami' user | tr '\n' ' ')" = "1000 1000 user " ] || fail "su did not become user"
[ "$(su -c 'cat /etc/passwd | grep -c user:' user)" = 1 ] || fail "the user cannot read /etc/passwd"
su -c 'cat /etc/shadow' user 2>/dev/null && fail "the user read /etc/shadow"
su -c 'echo x >> /etc/passwd' user 2>/dev/null && fail "the user wrote /etc/passwd"
su -c 'kill -0 1' user 2>/dev/null && fail "the user may signal init"
su -c 'touch /home/user/mine' user || fail "the user cannot write its home"
[ "$(ls -n /home/user/mine | awk '{print $3":"$4}')" = 1000:1000 ] || fail "the user's file is not its own"
[ "$(su -c 'su -c "id -u" root' user </dev/null 2>/dev/null)" != 0 ] || fail "the user became root again"
ls -l /etc/shadow | grep -q '^-rw-------' || fail "/etc/shadow is not 0600"
[ $bad = 0 ] && echo "login: the second user is kept out of root's"
exit $bad
