#!/usr/bin/env bash
# Packs this machine's Debian PostgreSQL server (scripts/setup.sh installs it) for the GPU
# machine, which has neither the server nor libpq and cannot fetch them: the binaries the
# fleet's H200 run needs (postgres, initdb, pg_ctl, psql), the two modules initdb loads, the
# share folder, and every library they link that is not glibc's, in the layout PostgreSQL's
# relocatable paths expect (bin/../../../../share/postgresql/N). Output: DIR/pg (default
# .devbuild-tools/pg), packed as DIR/pg.tar.xz for the device tool's carry; bench/fleet_on_device.sh
# unpacks it.
set -euo pipefail
out="${1:-.devbuild-tools}/pg"
version="$(ls /usr/lib/postgresql | sort -n | tail -1)"
src_bin="/usr/lib/postgresql/$version/bin"
rm -rf "$out"
mkdir -p "$out/usr/lib/postgresql/$version/bin" "$out/usr/lib/postgresql/$version/lib" \
         "$out/usr/share/postgresql" "$out/libs"
for tool in postgres initdb pg_ctl psql; do
  cp -L "$src_bin/$tool" "$out/usr/lib/postgresql/$version/bin/"
done
for module in plpgsql.so dict_snowball.so; do
  cp -L "/usr/lib/postgresql/$version/lib/$module" "$out/usr/lib/postgresql/$version/lib/"
done
cp -rL "/usr/share/postgresql/$version" "$out/usr/share/postgresql/"
# Libraries: everything the tools and libpq link, but glibc's own and the C++ runtime (the
# GPU machine's newer ones serve).
libpq="$(ldconfig -p | awk '/libpq.so.5 / {print $NF; exit}')"
cp -L "$libpq" "$out/libs/libpq.so.5"
{ for f in "$out/usr/lib/postgresql/$version/bin/"* "$libpq"; do ldd "$f"; done; } |
  awk '$3 ~ /^\// {print $3}' | sort -u |
  grep -Ev '/(libc|libm|libdl|libpthread|librt|libresolv|ld-linux-x86-64|libgcc_s|libstdc\+\+)\.so' |
  while read -r lib; do cp -L "$lib" "$out/libs/"; done
ln -s "usr/lib/postgresql/$version/bin" "$out/bin"
# ptxbench itself loads only libpq: a folder with libpq and the LDAP/SASL libraries an Ubuntu
# GPU machine lacks, so that its other processes (Triton's Python) keep the machine's own.
mkdir -p "$out/client"
for lib in libpq.so.5 libldap-2.5.so.0 liblber-2.5.so.0 libsasl2.so.2; do
  [ -e "$out/libs/$lib" ] && ln -s "../libs/$lib" "$out/client/$lib"
done
tar -C "$(dirname "$out")" -cf - pg | xz -T2 -6 > "$out.tar.xz"
du -sh "$out" "$out.tar.xz"
