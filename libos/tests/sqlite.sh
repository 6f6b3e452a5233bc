# SQLite through Python's sqlite3 module (issue 29: sqlite3 stopped at
# once with "disk I/O error (10)"): a database in tmp, a transaction of
# 1000 rows, a second connection finding the database locked while the
# first holds an exclusive transaction (fcntl record locks), then
# reading once it commits, and a rollback journal.
# with: python3.11
mkdir -p tmp
rm -f tmp/t.db
/usr/bin/python3.11 -c '
import sqlite3
a = sqlite3.connect("tmp/t.db", timeout=0)
a.execute("create table t (k integer primary key, v text)")
with a:
    a.executemany("insert into t (v) values (?)", [("row %d" % i,) for i in range(1000)])
print(a.execute("select count(*), sum(k) from t").fetchone())
b = sqlite3.connect("tmp/t.db", timeout=0)
a.execute("begin exclusive")
a.execute("insert into t (v) values (?)", ("late",))
try:
    b.execute("select count(*) from t").fetchone()
except sqlite3.OperationalError as e:
    print("second connection:", e)
a.commit()
print("second connection:", b.execute("select count(*) from t").fetchone())
a.execute("begin")
a.execute("delete from t")
a.rollback()
print("after a rollback:", a.execute("select count(*) from t").fetchone())
print(a.execute("pragma integrity_check").fetchone())
'
echo "sqlite: $?"
