# Archives, compression, checksums and comparisons.
mkdir -p tmp/src/in
seq 1 2000 > tmp/src/numbers
cp etc/passwd tmp/src/in/passwd
md5sum tmp/src/numbers
cd tmp && tar cf src.tar src && cd ..
tar tf tmp/src.tar | sort
gzip -c tmp/src/numbers > tmp/n.gz
gunzip -c tmp/n.gz | md5sum
mkdir -p tmp/out && cd tmp/out && tar xf ../src.tar && cd ../..
diff tmp/src/numbers tmp/out/src/numbers && echo same
cmp tmp/src/in/passwd etc/passwd && echo equal
echo changed >> tmp/out/src/numbers
cmp tmp/src/numbers tmp/out/src/numbers || echo differ
find tmp/out -type f | sort
find tmp/out -name passwd | xargs wc -l
