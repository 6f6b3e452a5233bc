# veneer-only
# with: curl
# Debian's curl on Veneer fetches from busybox httpd over 127.0.0.1 and
# through "localhost" (getaddrinfo, /etc/hosts).
fail() { echo "curl FAILED: $*"; exit 1; }
mkdir -p /tmp/www
echo "fetched by curl" > /tmp/www/index.html
busybox httpd -f -p 127.0.0.1:8082 -h /tmp/www &
server=$!
sleep 1
[ "$(curl -s http://127.0.0.1:8082/index.html)" = "fetched by curl" ] || fail "curl 127.0.0.1: $(curl -sS http://127.0.0.1:8082/index.html 2>&1)"
[ "$(curl -s http://localhost:8082/index.html)" = "fetched by curl" ] || fail "curl localhost: $(curl -sS http://localhost:8082/index.html 2>&1)"
code=$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:8082/missing)
[ "$code" = 404 ] || fail "missing page: $code"
kill $server
wait $server 2>/dev/null
echo "curl: ok"
