#!/usr/bin/env bash
# Builds, from a checkout, the Debian package .build/package/subdesk_VERSION_ARCH.deb and
# the tarball .build/package/subdesk-VERSION-linux-ARCH.tar.gz, with the same tree:
#
#   usr/bin/subdesk, usr/bin/subdesk-http     the Swift runtime linked in (-static-stdlib),
#                                             system libraries (libc, SQLite, ncurses,
#                                             libcrypto, libssl, libpq) shared
#   usr/lib/subdesk/subdesk-cgi, -metrics-cgi the web server's CGI programs (they start the
#                                             subdesk two folders up: usr/bin/subdesk)
#   usr/share/man/man1/subdesk*.1.gz          subdesk man --directory (subdesk-http's too)
#   usr/share/bash-completion/..., zsh/..., fish/...   subdesk completions SHELL
#   etc/subdesk/config                        subdesk sample-config --installed: every key
#                                             commented out but db, the services' store
#   usr/lib/systemd/system/                   the units in deploy/ and deploy/systemd/
#   usr/share/doc/subdesk/                    README.md and deploy/README.md (as
#                                             deploy-README.md), gzipped; examples/: the web
#                                             server configurations and Prometheus rules
#   usr/share/subdesk/                        the demo's scenarios and TEST ONLY CA (what
#                                             subdesk demo finds as ../share/subdesk)
#
# The commit (with -dirty), SOURCE_DATE_EPOCH (the commit's time unless set) and the
# linking reach the binary through .build/build-info.h, written for the build and removed
# after it, so the tree stays clean. The tarball unpacks anywhere: DIR/usr/bin/subdesk
# finds DIR/usr/share/subdesk.
set -euo pipefail
cd "$(dirname "$0")/.."

version=$(sed -n 's/^ *public static let string = "\(.*\)"$/\1/p' Sources/SubscriptionCore/Support/Version.swift)
arch=$(dpkg --print-architecture)
commit=unknown
if git rev-parse --git-dir >/dev/null 2>&1; then
    commit=$(git rev-parse --short=12 HEAD)
    [ -z "$(git status --porcelain --untracked-files=no)" ] || commit="$commit-dirty"
    : "${SOURCE_DATE_EPOCH:=$(git log -1 --format=%ct)}"
fi
: "${SOURCE_DATE_EPOCH:=$(date +%s)}"
export SOURCE_DATE_EPOCH

out=.build/package
root=$out/root
scratch=.build/package-build
mkdir -p "$out"

# The build: the Swift runtime and Foundation linked statically (no Debian package has
# them, and no RUNPATH into the toolchain), the system libraries dynamically (a fully
# static binary has no libpq, and lintian refuses one). It names the commit and the time.
SUBDESK_BUILD_COMMIT=$commit deploy/build-release.sh subdesk subdesk-http
bin=$scratch/release

rm -rf "$root"
install -d "$root/usr/bin" "$root/usr/lib/subdesk" "$root/usr/share/man/man1" "$root/etc/subdesk" \
    "$root/usr/share/bash-completion/completions" "$root/usr/share/zsh/vendor-completions" \
    "$root/usr/share/fish/vendor_completions.d" "$root/usr/lib/systemd/system" \
    "$root/usr/share/subdesk" "$root/usr/share/doc/subdesk/examples/prometheus"
for program in subdesk subdesk-http; do
    install -m 0755 "$bin/$program" "$root/usr/bin/$program"
    strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/bin/$program"
done
if readelf -d "$root/usr/bin/subdesk" "$root/usr/bin/subdesk-http" | grep -E "RUNPATH|RPATH"; then
    echo "package.sh: a binary has a RUNPATH (above); it must load only system libraries" >&2
    exit 1
fi
subdesk=$root/usr/bin/subdesk

# Installed paths: /usr/bin and /usr/lib/subdesk instead of deploy/'s /usr/local ones, the
# package's subdesk user for its services, and one store for all of them (units, CGI
# programs, hand-run commands): /etc/subdesk/config names it (db), and XDG_DATA_HOME=/var/lib
# makes the same /var/lib/subdesk/subdesk.db the default under a config kept from an older
# package without db. The CGI programs start the subdesk two folders above their own
# (usr/lib/subdesk/ -> usr/bin/), so the tarball's work wherever it is unpacked.
installed() {
    sed -e 's|/usr/local/bin/|/usr/bin/|g' -e 's|/usr/local/lib/subdesk|/usr/lib/subdesk|g' \
        -e 's|^User=www-data$|User=subdesk|' -e 's|^Group=www-data$|Group=subdesk|' \
        -e 's|^Environment=SUBDESK_CONFIG=/etc/subdesk/config$|&\nEnvironment=XDG_DATA_HOME=/var/lib|' \
        -e 's|^exec "/usr/bin/subdesk"|XDG_DATA_HOME=${XDG_DATA_HOME:-/var/lib} exec "$(dirname "$(readlink -f "$0")")/../../bin/subdesk"|' "$1"
}
for cgi in subdesk-cgi subdesk-metrics-cgi; do
    installed "deploy/$cgi" > "$root/usr/lib/subdesk/$cgi"
    grep -q '/../../bin/subdesk"' "$root/usr/lib/subdesk/$cgi" || { echo "package.sh: $cgi does not start the subdesk beside it" >&2; exit 1; }
    chmod 0755 "$root/usr/lib/subdesk/$cgi"
done
# The set-up guides and every example they name: web servers (CGI and serve) and the rules.
examples=$root/usr/share/doc/subdesk/examples
for conf in lighttpd.conf nginx-fcgiwrap.conf apache-cgi.conf lighttpd-serve.conf nginx-serve.conf apache-serve.conf; do
    installed "deploy/$conf" > "$examples/$conf"
done
install -m 0644 deploy/prometheus/*.yml "$examples/prometheus/"
install -m 0644 README.md "$root/usr/share/doc/subdesk/README.md"
install -m 0644 deploy/README.md "$root/usr/share/doc/subdesk/deploy-README.md"
gzip -9n "$root/usr/share/doc/subdesk/README.md" "$root/usr/share/doc/subdesk/deploy-README.md"
units=()
for unit in deploy/*.service deploy/*.socket deploy/*.timer deploy/systemd/*.service deploy/systemd/*.socket deploy/systemd/*.timer; do
    [ -f "$unit" ] || continue
    installed "$unit" > "$root/usr/lib/systemd/system/$(basename "$unit")"
    units+=("$(basename "$unit")")
done
# The demo's data, without the scripts that made the test CA.
cp -R sample-data/scenarios sample-data/test-ca "$root/usr/share/subdesk/"
rm -f "$root"/usr/share/subdesk/test-ca/*.sh

# Generated from the command table and the config keys, by the binary just built.
"$subdesk" man --directory "$root/usr/share/man/man1"
gzip -9n "$root"/usr/share/man/man1/*.1
"$subdesk" completions bash > "$root/usr/share/bash-completion/completions/subdesk"
"$subdesk" completions zsh > "$root/usr/share/zsh/vendor-completions/_subdesk"
"$subdesk" completions fish > "$root/usr/share/fish/vendor_completions.d/subdesk.fish"
"$subdesk" sample-config --installed > "$root/etc/subdesk/config"
grep -qx "db = /var/lib/subdesk/subdesk.db" "$root/etc/subdesk/config" || { echo "package.sh: the config names no store" >&2; exit 1; }

cat > "$root/usr/share/doc/subdesk/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: subdesk

Files: *
Copyright: $(date -u -d "@$SOURCE_DATE_EPOCH" +%Y) the subdesk authors
License: none
 All rights reserved. No licence is granted to use, copy, modify or distribute this
 software; it is not open source.
EOF
changelog=$root/usr/share/doc/subdesk/changelog
cat > "$changelog" <<EOF
subdesk ($version) unstable; urgency=medium

  * Built from commit $commit.

 -- subdesk <subdesk@invalid.example>  $(date -u -R -d "@$SOURCE_DATE_EPOCH")
EOF
gzip -9n "$changelog"
find "$root" -type d -exec chmod 0755 {} +
find "$root" -type f ! -perm -u+x -exec chmod 0644 {} +
# The config can name secrets' files and the store: not for every local user. postinst
# gives it the subdesk group (the units' user; add the web server's user to it for CGI).
chmod 0640 "$root/etc/subdesk/config"
# lintian's one warning, overridden with the reason (its comment lines are the justification).
install -d "$root/usr/share/lintian/overrides"
cat > "$root/usr/share/lintian/overrides/subdesk" <<'EOF'
# The config names the store and the files of secrets (API key, shared secret): root and
# the subdesk group (the services' user) read it, no other local user.
subdesk: non-standard-file-perm 0640 != 0644 [etc/subdesk/config]
EOF
chmod 0644 "$root/usr/share/lintian/overrides/subdesk"
find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

# The tarball: the tree as it is, nothing of dpkg's.
tarball=$out/subdesk-$version-linux-$arch.tar.gz
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" -C "$root" -cf - usr etc \
    | gzip -9n > "$tarball"

# The Debian package: the same tree, its libraries' packages from dpkg-shlibdeps.
shlibs=$(mktemp -d)
mkdir -p "$shlibs/debian"
touch "$shlibs/debian/control"
depends=$(cd "$shlibs" && dpkg-shlibdeps -O -e"$OLDPWD/$root/usr/bin/subdesk" -e"$OLDPWD/$root/usr/bin/subdesk-http" 2>/dev/null \
          | sed -n 's/^shlibs:Depends=//p')
rm -rf "$shlibs"
[ -n "$depends" ] || { echo "package.sh: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
install -d "$root/DEBIAN"
cat > "$root/DEBIAN/control" <<EOF
Package: subdesk
Version: $version
Architecture: $arch
Maintainer: subdesk <subdesk@invalid.example>
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: $depends, passwd
Section: admin
Priority: optional
Homepage: https://subdesk.invalid.example/
Description: App Store subscription operations: intake, state and a dashboard
 subdesk verifies App Store Server Notifications into a local store (SQLite,
 or PostgreSQL for a team), derives each subscriber's true state, and shows it
 in a terminal dashboard and on the command line: counts, cohorts, refunds,
 revalidation against Apple, on-call metrics and checks.
EOF
echo /etc/subdesk/config > "$root/DEBIAN/conffiles"
units_list="${units[*]}"
# The units that keep running (not oneshots a timer starts): an upgrade restarts them.
running=()
for unit in "${units[@]}"; do
    case $unit in *.service) grep -q '^Type=oneshot' "$root/usr/lib/systemd/system/$unit" || running+=("$unit") ;; esac
done
running_list="${running[*]}"
cat > "$root/DEBIAN/postinst" <<EOF
#!/bin/sh
set -e
running="$running_list"
if [ "\$1" = configure ]; then
    # The services' user, and the store's folder; both are kept on removal and purge.
    if ! getent passwd subdesk >/dev/null; then
        useradd --system --user-group --home-dir /var/lib/subdesk --no-create-home \\
            --shell /usr/sbin/nologin --comment "subdesk services" subdesk
    fi
    if [ ! -d /var/lib/subdesk ]; then
        install -d -o subdesk -g subdesk -m 2770 /var/lib/subdesk
    fi
    # The config as the package made it (root's group) becomes readable by the subdesk
    # group; one an administrator has given another owner or mode is left as it is.
    if [ "\$(stat -c %U:%G:%a /etc/subdesk/config 2>/dev/null)" = root:root:640 ]; then
        chgrp subdesk /etc/subdesk/config
    fi
    if [ -d /run/systemd/system ]; then
        systemctl daemon-reload || true
    fi
    if [ -n "\$2" ]; then
        # An upgrade: the services that run start the new binary (deb-systemd-invoke
        # restarts one only when it is enabled or running); doctor says whether the set-up
        # still holds (the store's schema migrates on its first write).
        if [ -d /run/systemd/system ] && [ -n "\$running" ]; then
            deb-systemd-invoke restart \$running || true
        fi
        if [ -r /etc/subdesk/config ]; then
            # XDG_DATA_HOME=/var/lib: a kept config without db still means /var/lib/subdesk/subdesk.db.
            runuser -u subdesk -- env SUBDESK_CONFIG=/etc/subdesk/config HOME=/var/lib/subdesk XDG_DATA_HOME=/var/lib subdesk doctor \\
                || echo "subdesk: doctor found problems (above); the upgrade is installed" >&2
        fi
    fi
fi
exit 0
EOF
cat > "$root/DEBIAN/prerm" <<EOF
#!/bin/sh
set -e
units="$units_list"
if [ "\$1" = remove ] && [ -d /run/systemd/system ] && [ -n "\$units" ]; then
    deb-systemd-invoke stop \$units || true
fi
exit 0
EOF
cat > "$root/DEBIAN/postrm" <<'EOF'
#!/bin/sh
set -e
if [ -d /run/systemd/system ]; then
    systemctl daemon-reload || true
fi
if [ "$1" = purge ] && [ -d /var/lib/subdesk ]; then
    # The store is data, not the package's: it is never removed, not even on purge.
    echo "subdesk: /var/lib/subdesk and the subdesk user are kept (the store); remove them yourself if you mean to" >&2
fi
exit 0
EOF
chmod 0755 "$root/DEBIAN/postinst" "$root/DEBIAN/prerm" "$root/DEBIAN/postrm"
(cd "$root" && find usr etc -type f ! -path etc/\* -exec md5sum {} + | sort -k2) > "$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/conffiles" "$root/DEBIAN/md5sums"
deb=$out/subdesk_${version}_$arch.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
rm -rf "$root/DEBIAN"
echo "built $deb and $tarball (subdesk $version, commit $commit)"
