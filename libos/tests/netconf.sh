# veneer-only
# What Linux programs read about the network: ifconfig (its interface
# requests and /proc/net/dev), /etc/hosts through getaddrinfo (busybox
# wget and nc name localhost), hostname. Exits with 1 at the first thing
# that is not as it should be.
fail() { echo "netconf FAILED: $*"; exit 1; }
ifconfig > /tmp/if || fail "ifconfig: $?"
cat /tmp/if
grep -q "^eth0 *Link encap:Ethernet  HWaddr 52:54:00:12:34:56" /tmp/if || fail "eth0's address"
grep -q "inet addr:10.0.2.15  Bcast:10.0.2.255  Mask:255.255.255.0" /tmp/if || fail "eth0's IPv4 address"
grep -q "^lo *Link encap:Local Loopback" /tmp/if || fail "lo"
grep -q "inet addr:127.0.0.1  Mask:255.0.0.0" /tmp/if || fail "lo's address"
grep -q "UP BROADCAST RUNNING MULTICAST  MTU:1500" /tmp/if || fail "eth0's flags"
head -2 /proc/net/dev
grep -q "^  eth0:" /proc/net/dev || fail "/proc/net/dev has no eth0"
grep -q "^    lo:" /proc/net/dev || fail "/proc/net/dev has no lo"
# The address came over the wire (DHCP's exchange): eth0 counted frames.
rx=$(sed -n 's/^ *eth0: *[0-9]* *\([0-9]*\).*/\1/p' /proc/net/dev)
[ "$rx" -gt 0 ] || fail "eth0 received $rx frames"
echo "netconf: eth0 received $rx frames"
grep -q "^127.0.0.1	localhost" /etc/hosts || fail "/etc/hosts"
echo "netconf: /etc/hosts ok; nc over 127.0.0.1"
(echo served | nc -l -p 7000 > /dev/null) &
sleep 1
echo "netconf: slept; connecting"
[ "$(nc localhost 7000 < /dev/null)" = served ] || fail "nc to localhost"
echo "netconf: nc answered; waiting for the server"
wait
echo "netconf: ok"
