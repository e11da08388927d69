#!/usr/bin/env bash
# Checks what deploy/package.sh built, as a new user would meet it:
#   - the tarball unpacked into an empty folder and run from another one, with fresh XDG
#     folders: subdesk demo builds the demo, --version names the commit;
#   - every man page renders without a warning;
#   - the completions: bash (sourced, `subdesk co` and `subdesk counts --se`), zsh and
#     fish (syntax, and one completion each);
#   - lintian finds no error in the Debian package;
#   - the documentation and examples under usr/share/doc/subdesk, the unpacked tarball's
#     CGI program starting the subdesk unpacked with it;
#   - with --install (CI's machine, root): dpkg -i, deploy/check-installed.sh
#     (the README's package steps; the units, CGI programs and hand-run commands on one
#     store), man subdesk, and dpkg --purge leaves the store in /var/lib/subdesk; with
#     --install-only, that and nothing else. The install is then undone (the store, the
#     config, the user and group), pass or fail, so the check runs again on the same
#     machine; it refuses a machine with a subdesk of its own (one it did not install).
# Exits non-zero on the first failure, saying which.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

install_too=no
checks=yes
case "${1:-}" in
"") ;;
--install) install_too=yes ;;
# CI checks the package beside the tests and installs it after them (dpkg -i changes the
# machine the tests run on): the install alone.
--install-only) install_too=yes; checks=no ;;
*) echo "usage: deploy/check-package.sh [--install | --install-only]" >&2; exit 2 ;;
esac

version=$(sed -n 's/^ *public static let string = "\(.*\)"$/\1/p' Sources/SubscriptionCore/Support/Version.swift)
arch=$(dpkg --print-architecture)
deb=$repo/.build/package/subdesk_${version}_$arch.deb
tarball=$repo/.build/package/subdesk-$version-linux-$arch.tar.gz
commit=$(git rev-parse --short=12 HEAD)
[ -z "$(git status --porcelain --untracked-files=no)" ] || commit="$commit-dirty"

fail() { echo "check-package: FAILED: $*" >&2; exit 1; }
ok() { echo "check-package: $*"; }
[ -f "$deb" ] && [ -f "$tarball" ] || fail "no $deb or $tarball: run deploy/package.sh first"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/unpacked" "$tmp/elsewhere" "$tmp/home"
tar -xzf "$tarball" -C "$tmp/unpacked"
tree=$tmp/unpacked
subdesk=$tree/usr/bin/subdesk
# Nothing of the checkout or the caller's settings: a clean environment.
run() { (cd "$tmp/elsewhere" && env -i PATH=/usr/bin:/bin HOME="$tmp/home" XDG_DATA_HOME="$tmp/data" \
            XDG_CONFIG_HOME="$tmp/config" LANG=C.UTF-8 "$@"); }

if [ "$checks" = yes ]; then
# The demo from elsewhere.
run "$subdesk" demo --no-dashboard --db demo.db > "$tmp/demo.log" 2>&1 || { cat "$tmp/demo.log"; fail "subdesk demo from the unpacked tarball"; }
[ -f "$tmp/elsewhere/demo.db" ] || fail "subdesk demo wrote no demo.db"
run "$subdesk" --db demo.db counts --json > /dev/null || fail "subdesk counts on the demo store"
ok "the unpacked tarball builds the demo from another folder"

# The CGI program starts the subdesk beside it (usr/lib/subdesk/ -> usr/bin/), wherever the
# tarball is unpacked: with no subdesk on PATH, it still answers as subdesk does.
answer=$(run env REQUEST_METHOD=GET "$tree/usr/lib/subdesk/subdesk-cgi" 2>&1) || true
echo "$answer" | grep -q "^Status: [0-9]" || { echo "$answer"; fail "the unpacked tarball's subdesk-cgi did not start its subdesk"; }
ok "the unpacked tarball's CGI program starts the subdesk unpacked with it"

# What a user reads after installing: both guides and every example they name.
doc=$tree/usr/share/doc/subdesk
for f in README.md.gz deploy-README.md.gz examples/lighttpd.conf examples/nginx-fcgiwrap.conf examples/apache-cgi.conf \
         examples/lighttpd-serve.conf examples/nginx-serve.conf examples/apache-serve.conf examples/prometheus/subdesk.rules.yml; do
    [ -f "$doc/$f" ] || fail "no /usr/share/doc/subdesk/$f"
done
if grep -rq "/usr/local/" "$doc/examples"; then grep -rn "/usr/local/" "$doc/examples"; fail "an example names /usr/local (the package's paths are /usr)"; fi
[ -f "$tree/usr/share/man/man1/subdesk-http.1.gz" ] || fail "no manual page for subdesk-http"
ok "the guides and examples are in /usr/share/doc/subdesk, subdesk-http has its page"

run "$subdesk" --version > "$tmp/version"
grep -qx "commit: $commit" "$tmp/version" || { cat "$tmp/version"; fail "--version does not name commit $commit"; }
grep -qx "linking: static-stdlib" "$tmp/version" || fail "--version does not say static-stdlib"
ok "--version names commit $commit"

# Every man page, as man-db renders it, and as groff checks it.
pages=0
for page in "$tree"/usr/share/man/man1/*.1.gz; do
    warnings=$(run env MANPAGER=cat MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
    [ -z "$warnings" ] || fail "man --warnings on $(basename "$page"): $warnings"
    warnings=$(zcat "$page" | groff -ww -man -z 2>&1)
    [ -z "$warnings" ] || fail "groff -ww on $(basename "$page"): $warnings"
    pages=$((pages + 1))
done
[ "$pages" -gt 1 ] || fail "no man pages"
ok "$pages man pages render without warnings"

# bash: the script sourced, its function called as bash's completion calls it.
bash_complete() {
    local words=$1
    run bash --norc --noprofile -c "source '$tree/usr/share/bash-completion/completions/subdesk'
        COMP_WORDS=($words); COMP_CWORD=\$((\${#COMP_WORDS[@]} - 1)); _subdesk; printf '%s\n' \"\${COMPREPLY[@]}\"" | sort | tr '\n' ' '
}
got=$(bash_complete "subdesk co")
want=$(run "$subdesk" commands | sed -n 's/^| `subdesk \(co[a-z-]*\).*/\1/p' | sort | tr '\n' ' ')
[ "$got" = "$want" ] || fail "bash completion of 'subdesk co' gave '$got', not '$want'"
[ "$got" = "cohorts commands completions consent counts " ] || fail "bash completion of 'subdesk co' gave '$got'"
got=$(bash_complete "subdesk counts --se")
[ "$got" = "--segment " ] || fail "bash completion of 'subdesk counts --se' gave '$got'"
ok "bash completes 'subdesk co' and 'subdesk counts --se'"

# zsh: syntax, and compinit binds the function to subdesk.
zsh -n "$tree/usr/share/zsh/vendor-completions/_subdesk" || fail "zsh -n _subdesk"
got=$(run zsh -f -c "fpath=('$tree/usr/share/zsh/vendor-completions' \$fpath); autoload -Uz compinit; compinit -u -D; print -r -- \"\${_comps[subdesk]}\"")
[ "$got" = _subdesk ] || fail "zsh's compinit does not bind _subdesk to subdesk ($got)"
got=$(run "$repo/scripts/zsh-complete" "$tree/usr/share/zsh/vendor-completions" "subdesk counts --se")
[ "$got" = --segment ] || fail "zsh completion of 'subdesk counts --se' gave '$got'"
# fish: syntax, and one completion.
fish -n "$tree/usr/share/fish/vendor_completions.d/subdesk.fish" || fail "fish -n subdesk.fish"
got=$(run fish --no-config -c "source '$tree/usr/share/fish/vendor_completions.d/subdesk.fish'; complete -C 'subdesk counts --se'" | cut -f1)
[ "$got" = --segment ] || fail "fish completion of 'subdesk counts --se' gave '$got'"
ok "zsh and fish read their completions"

# No error and no warning: the one tag the package means (the config's mode) is overridden,
# with its reason, in usr/share/lintian/overrides/subdesk.
lintian --fail-on error,warning --tag-display-limit 0 "$deb" > "$tmp/lintian" 2>&1 || { cat "$tmp/lintian"; fail "lintian reports errors or warnings"; }
if grep -E '^(E|W):' "$tmp/lintian"; then fail "lintian reports the above"; fi
ok "lintian: no errors, no warnings"
fi

if [ "$install_too" = yes ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    # What this check installs it marks, and undoes on its way out: a run stopped before
    # that (killed) leaves the mark, and the next run clears what it left. A subdesk
    # without the mark is someone's: its store is never touched.
    mark=/var/lib/subdesk/.installed-by-check-package
    undo_install() {
        $sudo dpkg --purge subdesk > /dev/null 2>&1 || true
        $sudo rm -rf /var/lib/subdesk /etc/subdesk
        if getent group subdesk > /dev/null; then
            for member in $(getent group subdesk | cut -d: -f4 | tr , ' '); do
                $sudo gpasswd -d "$member" subdesk > /dev/null 2>&1 || true
            done
        fi
        ! getent passwd subdesk > /dev/null || $sudo userdel subdesk || true
        ! getent group subdesk > /dev/null || $sudo groupdel subdesk || true
    }
    if [ -e "$mark" ]; then
        ok "clearing what an earlier run of this check left installed"
        undo_install
    fi
    if dpkg-query -W -f '${Status}' subdesk 2> /dev/null | grep -q installed \
        || [ -e /var/lib/subdesk ] || [ -e /etc/subdesk ] || getent passwd subdesk > /dev/null; then
        fail "this machine has a subdesk of its own (the package, /var/lib/subdesk, /etc/subdesk or the subdesk user) that this check did not install: it installs on a machine without one"
    fi
    trap 'rm -rf "$tmp"; undo_install' EXIT
    $sudo dpkg -i "$deb" || fail "dpkg -i"
    $sudo touch "$mark"
    getent passwd subdesk > /dev/null || fail "no subdesk user after install"
    [ -d /var/lib/subdesk ] || fail "no /var/lib/subdesk after install"
    got=$(stat -c %U:%G:%a /etc/subdesk/config)
    [ "$got" = root:subdesk:640 ] || fail "/etc/subdesk/config is $got after install, not root:subdesk:640"
    $sudo runuser -u subdesk -- test -r /etc/subdesk/config || fail "the subdesk user cannot read /etc/subdesk/config"
    $sudo runuser -u nobody -- test ! -r /etc/subdesk/config || fail "another user can read /etc/subdesk/config"
    # deploy/README.md's steps, and every part of the package on the one store.
    $sudo deploy/check-installed.sh || fail "the installed package (deploy/check-installed.sh, above)"
    # The same package again is an upgrade: postinst runs doctor on the store.
    $sudo dpkg -i "$deb" > "$tmp/upgrade.log" 2>&1 || { cat "$tmp/upgrade.log"; fail "dpkg -i over the installed package"; }
    grep -q "subdesk.db" "$tmp/upgrade.log" || { cat "$tmp/upgrade.log"; fail "the upgrade did not run subdesk doctor on /var/lib/subdesk/subdesk.db"; }
    MANPAGER=cat man subdesk > "$tmp/man.txt" 2>&1 || fail "man subdesk"
    grep -q "subdesk-counts" "$tmp/man.txt" || fail "man subdesk does not list subdesk-counts"
    MANPAGER=cat man subdesk-counts | grep -q -- "--segment" || fail "man subdesk-counts"
    $sudo dpkg --purge subdesk || fail "dpkg --purge"
    [ -f /var/lib/subdesk/subdesk.db ] || fail "dpkg --purge removed the store"
    [ ! -e /usr/bin/subdesk ] || fail "dpkg --purge left /usr/bin/subdesk"
    ok "dpkg -i, subdesk doctor, an upgrade running doctor, man subdesk, and dpkg --purge kept /var/lib/subdesk/subdesk.db"
    undo_install
    trap 'rm -rf "$tmp"' EXIT
    for left in /var/lib/subdesk /etc/subdesk /usr/bin/subdesk; do
        [ ! -e "$left" ] || fail "$left is left after the install was undone"
    done
    ! getent passwd subdesk > /dev/null || fail "the subdesk user is left after the install was undone"
    ok "the install undone: no store, config or subdesk user left"
fi
ok "the package and the tarball pass"
