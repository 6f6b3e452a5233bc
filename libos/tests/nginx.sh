# veneer-only
# with: nginx
# Debian's nginx on Veneer: a master and two worker processes sharing the
# listening socket, epoll, sendfile, accept4; busybox wget fetches a
# small page and a 1 MiB file (checked by MD5) several times.
fail() { echo "nginx FAILED: $*"; cat /tmp/nginx/error.log 2>/dev/null; exit 1; }
mkdir -p /tmp/nginx/www /tmp/nginx/tmp
echo "served by nginx" > /tmp/nginx/www/index.html
dd if=/dev/urandom of=/tmp/nginx/www/big bs=1024 count=1024 2>/dev/null
want=$(md5sum < /tmp/nginx/www/big)
cat > /tmp/nginx/nginx.conf <<CONF
user root;
worker_processes 2;
pid /tmp/nginx/nginx.pid;
error_log /tmp/nginx/error.log;
events { worker_connections 64; use epoll; }
http {
    access_log off;
    sendfile on;
    client_body_temp_path /tmp/nginx/tmp;
    proxy_temp_path /tmp/nginx/tmp;
    fastcgi_temp_path /tmp/nginx/tmp;
    uwsgi_temp_path /tmp/nginx/tmp;
    scgi_temp_path /tmp/nginx/tmp;
    server {
        listen 127.0.0.1:8083;
        root /tmp/nginx/www;
    }
}
CONF
nginx -c /tmp/nginx/nginx.conf -g 'daemon off;' &
server=$!
i=0
until wget -q -O /tmp/got http://127.0.0.1:8083/index.html 2>/dev/null; do
    i=$((i + 1))
    [ $i -lt 60 ] || fail "nginx never answered"
    sleep 1
done
[ "$(cat /tmp/got)" = "served by nginx" ] || fail "index: $(cat /tmp/got)"
for j in 1 2 3 4; do
  ( for i in $(seq 1 15); do
    wget -q -O /tmp/big$j http://127.0.0.1:8083/big || fail "big file, fetch $j $i: wget $?"
    [ "$(md5sum < /tmp/big$j)" = "$want" ] || fail "big file, fetch $i: $(wc -c < /tmp/big$j) bytes, not the file"
    wget -q -O /tmp/idx$j http://127.0.0.1:8083/index.html || fail "index $j $i"
  done; echo "loop $j done" ) &
  pids="$pids $!"
done
for p in $pids; do wait $p || fail "loop $p"; done
for j in 1 2 3 4; do [ -f /tmp/big$j ] || fail "no big$j"; done
# The master and its two workers (their titles, which nginx writes over
# its arguments, are not what ps shows here).
procs=$(ps | grep -c "[n]ginx -c")
[ "$procs" = 3 ] || fail "$procs nginx processes: $(ps)"
kill $server
wait $server 2>/dev/null
echo "nginx: ok"
