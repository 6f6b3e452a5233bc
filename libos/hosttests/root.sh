# `/` is the C-FFS of the XN disk (lxrt -r; boot tests root_persist,
# root_hostile, root_dynamic, xtask/src/xntest.rs): `root.sh write`,
# reboot on the same image, `root.sh read`; `root.sh hostile` as the
# second user; `root.sh dynamic`: a Debian program and its libraries,
# all read from the disk.
fail() {
	echo "root: $*"
	exit 1
}
case "$1" in
write)
	echo "root's own" > /root/note
	chmod 640 /root/note
	echo "# kept across boots" >> /etc/resolv.conf
	mkdir -p /srv/new/deep
	echo deep > /srv/new/deep/file
	chmod 751 /srv/new
	seq 1 30000 > /srv/big
	ln /srv/big /srv/big.link
	ln -s /srv/new/deep/file /srv/sym
	echo renamed > /srv/old
	mv /srv/old /srv/renamed
	echo mine > /home/user/mine
	chown 1000:1000 /home/user/mine
	echo "in memory" > /tmp/volatile
	sync
	echo "root: written"
	;;
read)
	echo "note: $(cat /root/note) $(stat -c %a /root/note)"
	echo "resolv: $(tail -n 1 /etc/resolv.conf)"
	echo "deep: $(cat /srv/new/deep/file) $(stat -c %a /srv/new)"
	seq 1 30000 | cmp - /srv/big || fail "/srv/big changed"
	[ "$(stat -c %h /srv/big)" = 2 ] || fail "/srv/big has $(stat -c %h /srv/big) links"
	[ "$(stat -c %i /srv/big)" = "$(stat -c %i /srv/big.link)" ] || fail "/srv/big.link is another file"
	echo "big: the same 168,894 bytes under two names"
	echo "sym: $(readlink /srv/sym) $(cat /srv/sym)"
	echo "renamed: $(cat /srv/renamed)"
	test -e /srv/old && fail "/srv/old is back"
	echo "mine: $(cat /home/user/mine) $(stat -c %u:%g /home/user/mine)"
	test -e /tmp/volatile && fail "/tmp is on the disk"
	test -c /dev/null && test -r /proc/self/stat && test -d /sys/block || fail "a synthetic tree is missing"
	echo "mounts: $(grep -c " / cffs " /proc/mounts) root on the disk, $(grep -c " /tmp tmpfs " /proc/mounts) /tmp in memory"
	echo "df: / has $(df -k / | awk 'NR == 2 { print $2 }') KiB"
	echo "root: read"
	;;
hostile)
	echo secret > /etc/secret
	chmod 600 /etc/secret
	su -c 'echo x >> /etc/passwd' user 2>/dev/null && fail "the user wrote /etc/passwd"
	su -c 'cat /etc/secret' user 2>/dev/null && fail "the user read a 0600 root file"
	su -c 'touch /etc/evil' user 2>/dev/null && fail "the user made a file in /etc"
	su -c 'chmod 666 /etc/passwd' user 2>/dev/null && fail "the user chmod-ed /etc/passwd"
	su -c 'rm /bin/busybox' user 2>/dev/null && fail "the user removed /bin/busybox"
	test -e /etc/evil && fail "/etc/evil exists"
	[ "$(stat -c %a /etc/passwd)" = 644 ] || fail "/etc/passwd's mode changed"
	grep -q '^x$' /etc/passwd && fail "/etc/passwd was written"
	# A file of a group the user is in only as a supplementary one
	# (/etc/group: staff), read through the library and XN alike.
	echo "for the staff" > /etc/staffnote
	chgrp staff /etc/staffnote && chmod 640 /etc/staffnote
	[ "$(su -c 'cat /etc/staffnote' user)" = "for the staff" ] || fail "the user cannot read its supplementary group's file"
	su -c 'echo x >> /etc/staffnote' user 2>/dev/null && fail "the user wrote a 0640 file of its group"
	su -c 'echo mine > /home/user/mine' user || fail "the user cannot write its own home"
	# Its own new files and directories, on the disk as itself.
	su -c 'mkdir /home/user/d && seq 1 3000 > /home/user/d/f && mv /home/user/d/f /home/user/d/g' user ||
		fail "the user cannot make files in its home"
	[ "$(su -c 'tail -n 1 /home/user/d/g' user)" = 3000 ] || fail "the user cannot read its new file"
	su -c 'rm -r /home/user/d' user || fail "the user cannot remove its files"
	# A program on the disk is mapped from XN's cache pages, its data too
	# (lxrt's exec view): its writes copy the page and never reach the
	# file or another run; a program the user may not read it cannot run.
	cp /cbin/execdata /etc/execdata && chmod 700 /etc/execdata
	/etc/execdata >/dev/null && /etc/execdata >/dev/null || fail "a run of execdata saw another's writes"
	cmp /cbin/execdata /etc/execdata || fail "execdata's writes reached its file"
	su -c /etc/execdata user 2>/dev/null && fail "the user ran root's 0700 program"
	# Past the library: XN itself, with every credential the user holds.
	yes TOPSECRET | head -c 12000 > /etc/xnsecret
	chmod 600 /etc/xnsecret
	su -c '/cbin/xnsteal /etc/xnsecret TOPSECRET' user || fail "the user read root's file through XN"
	[ "$(grep -c TOPSECRET /etc/xnsecret)" = 1200 ] || fail "root cannot read its own file"
	# A file small enough for C-FFS to keep in its directory entry, whose
	# block anyone who may search /etc binds.
	echo TINYSECRET > /etc/xntiny
	chmod 600 /etc/xntiny
	su -c '/cbin/xnsteal /etc/xntiny TINYSECRET' user || fail "the user read root's small file through XN"
	[ "$(cat /etc/xntiny)" = TINYSECRET ] || fail "root cannot read its own small file"
	# A user's sync while root's write to its file is unsettled (open).
	exec 3<>/etc/xnsecret
	echo more >&3
	su -c '/cbin/syncall /home/user/mine' user || fail "a user's sync failed on root's unsettled file"
	exec 3>&-
	[ "$(head -n 1 /etc/xnsecret)" = more ] || fail "root's write was lost"
	echo "hostile: every change refused; $(stat -c %U /home/user/mine) wrote its home"
	;;
dynamic)
	echo "dynamic: $(python3 -c 'import sys; print(sys.version_info[0], 6 * 7)')"
	;;
*)
	fail "usage: root.sh write|read|hostile|dynamic"
	;;
esac
