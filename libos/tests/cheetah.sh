# veneer-only
# Cheetah (docs/network.md, "Cheetah"): /cbin/cheetah publishes /tmp/www
# into the library stack's HTTP fast path; busybox wget fetches files of
# 0 B to 100,000 B (one chunk exactly, one byte past it) over 127.0.0.1,
# each checked by MD5 against the file, and a missing one (404);
# /cbin/cheetahtest sends garbage, a truncated request, a request too
# long, a connection with no request, and closes and resets in the middle
# of a 100,000-byte response, then fetches it whole. The server must
# still answer, and its counters must say every data segment's checksum
# came from the cache. Exits with 1 at the first thing that is wrong.
fail() { echo "cheetah FAILED: $*"; cat /tmp/cheetah.log; exit 1; }
mkdir -p /tmp/www
echo "<html>hello from cheetah</html>" > /tmp/www/index.html
: > /tmp/www/empty
head -c 1460 /dev/urandom > /tmp/www/chunk
head -c 1461 /dev/urandom > /tmp/www/chunk1
head -c 100000 /dev/urandom > /tmp/www/big
/cbin/cheetah 8085 /tmp/www > /tmp/cheetah.log 2>&1 &
server=$!
i=0
until grep -q "files on port" /tmp/cheetah.log; do
    i=$((i + 1))
    [ $i -lt 50 ] || fail "the server did not start"
    sleep 0.1
done
for f in index.html empty chunk chunk1 big; do
    rm -f /tmp/got
    wget -q -O /tmp/got http://127.0.0.1:8085/$f || fail "wget $f"
    [ "$(md5sum < /tmp/got)" = "$(md5sum < /tmp/www/$f)" ] || fail "$f differs"
done
wget -q -O - http://127.0.0.1:8085/ | grep -q "hello from cheetah" || fail "/ is not index.html"
wget -q -O - http://127.0.0.1:8085/missing 2>/tmp/err && fail "a missing file was found"
grep -q 404 /tmp/err || fail "no 404: $(cat /tmp/err)"
/cbin/cheetahtest 8085 /tmp/www/big || fail "hostile clients"
kill -0 $server || fail "the server died"
wget -q -O /tmp/got http://127.0.0.1:8085/big || fail "wget after the hostile clients"
[ "$(md5sum < /tmp/got)" = "$(md5sum < /tmp/www/big)" ] || fail "big differs afterwards"
kill -TERM $server
wait $server || fail "the server's exit status"
cat /tmp/cheetah.log
grep -q " computed_sums=0 " /tmp/cheetah.log || fail "a checksum was computed when sent"
grep -q " cached_sums=0 " /tmp/cheetah.log && fail "no checksum came from the cache"
grep -q " bad_requests=3 " /tmp/cheetah.log || fail "bad requests miscounted"
echo "cheetah: ok"
