# The network with the host (xtask/src/nettest.rs): busybox wget fetches
# files of 0 bytes to 4 MiB from the server the test runs on the host
# (10.0.2.2:PORT, QEMU's gateway), prints their MD5s (the test knows
# what they must be), then serves them with busybox httpd on port 80,
# which the host's curl fetches through QEMU's forwarded port and checks;
# the host's /done says how that went. Then the same with Cheetah
# (/cbin/cheetah) on port 80, over the NIC; /done2.
port=$1
fail() { echo "nethost FAILED: $*"; exit 1; }
mkdir -p /tmp/www
for n in 0 1 1460 65536 1048576 4194304; do
    wget -q -O /tmp/www/f$n http://10.0.2.2:$port/f$n || fail "wget f$n"
    echo "nethost: f$n md5 $(md5sum < /tmp/www/f$n | cut -d' ' -f1)"
done
busybox httpd -f -p 80 -h /tmp/www &
httpd=$!
i=0
while [ $i -lt 150 ]; do
    r=$(wget -q -O - http://10.0.2.2:$port/done 2>/dev/null) && break
    sleep 1
    i=$((i + 1))
done
kill $httpd
wait $httpd 2>/dev/null
[ "$r" = ok ] || fail "the host's fetches: $r"
echo "nethost: the host fetched every file intact"
/cbin/cheetah 80 /tmp/www > /tmp/cheetah.log 2>&1 &
cheetah=$!
i=0
while [ $i -lt 150 ]; do
    r=$(wget -q -O - http://10.0.2.2:$port/done2 2>/dev/null) && break
    sleep 1
    i=$((i + 1))
done
kill -TERM $cheetah
wait $cheetah
cat /tmp/cheetah.log
[ "$r" = ok ] || fail "the host's fetches from cheetah: $r"
echo "nethost: the host fetched every file from cheetah intact"
