# veneer-only
# Loopback TCP between processes over the shared stack: busybox httpd
# serves (a process per connection), wget fetches; nc both ways. Exits
# with 1 at the first thing that is not as it should be.
fail() { echo "netloop FAILED: $*"; exit 1; }
mkdir -p /tmp/www
echo "hello over loopback" > /tmp/www/index.html
busybox httpd -f -p 127.0.0.1:8080 -h /tmp/www &
httpd=$!
sleep 1
wget -q -O /tmp/got http://127.0.0.1:8080/index.html || fail "wget"
[ "$(cat /tmp/got)" = "hello over loopback" ] || fail "page: $(cat /tmp/got)"
wget -q -O - http://127.0.0.1:8080/missing.html 2>/dev/null && fail "a missing page was found"
i=0
while [ $i -lt 20 ]; do
    [ "$(wget -q -O - http://127.0.0.1:8080/index.html)" = "hello over loopback" ] || fail "fetch $i"
    i=$((i + 1))
done
kill $httpd
wait $httpd 2>/dev/null
got=$( (echo ping | nc -l -p 9000 > /tmp/ncgot) & sleep 1; echo pong | nc 127.0.0.1 9000; wait)
[ "$got" = "ping" ] || fail "nc server to client: $got"
[ "$(cat /tmp/ncgot)" = "pong" ] || fail "nc client to server: $(cat /tmp/ncgot)"
echo "netloop: ok"
