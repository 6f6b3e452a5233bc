# veneer-only
# with: python3
# python3's http.server on Veneer serves busybox wget, and python3's
# urllib fetches from it, over 127.0.0.1.
fail() { echo "pyhttp FAILED: $*"; exit 1; }
mkdir -p /tmp/py && cd /tmp/py
echo "served by python" > index.html
python3 -m http.server 8081 --bind 127.0.0.1 > /tmp/py.log 2>&1 &
server=$!
i=0
until wget -q -O /tmp/got http://127.0.0.1:8081/index.html 2>/dev/null; do
    i=$((i + 1))
    [ $i -lt 60 ] || fail "the server never answered: $(cat /tmp/py.log)"
    sleep 1
done
[ "$(cat /tmp/got)" = "served by python" ] || fail "wget got $(cat /tmp/got)"
got=$(python3 -c 'import urllib.request; print(urllib.request.urlopen("http://127.0.0.1:8081/index.html").read().decode().strip())')
[ "$got" = "served by python" ] || fail "urllib got $got"
kill $server
wait $server 2>/dev/null
echo "pyhttp: ok"
