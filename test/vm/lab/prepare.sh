#!/usr/bin/env bash
# prepare.sh: build (or reuse) the lab's kernels and root image in a cache
# directory outside the git clone and print its path on the last line.
#   ${KAUDIT_VM_CACHE:-/var/cache/kaudit-vmlab}/<sha256 of the inputs>/
#     stock/{bzImage,config,release,modules/}   reverted/{...}
#     rootfs.img  id_ed25519{,.pub}  ssh_host_ed25519_key.pub  packages.txt
#     timings.txt  COMPLETE
# The inputs: these scripts, kernel.config, the patch, and the installed
# versions of linux-source-6.1 and mmdebstrap. A complete entry is reused; a
# new one is built in a temporary directory and renamed into place.
# Everything but the path goes to stderr.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$here/common.sh"

[ "$(id -u)" -eq 0 ] || die "must run as root"
ensure_packages qemu-system-x86 qemu-utils mmdebstrap linux-source-6.1 e2fsprogs openssh-client \
	build-essential bc flex bison libelf-dev libssl-dev kmod cpio xz-utils patch debian-archive-keyring

root=${KAUDIT_VM_CACHE:-/var/cache/kaudit-vmlab}
mkdir -p "$root"
root=$(cd "$root" && pwd)

pkgver() {
	dpkg-query -W -f='${Package} ${Version}\n' "$1"
}
key=$({
	for f in prepare.sh build-kernel.sh build-rootfs.sh common.sh kernel.config revert-909172a.patch; do
		printf '%s ' "$f"
		sha256sum <"$here/$f"
	done
	pkgver linux-source-6.1
	pkgver mmdebstrap
} | sha256sum | cut -d' ' -f1)
entry=$root/$key

# One prepare at a time per cache (a second waits, then reuses).
exec 9>"$root/.lock"
flock 9

if [ -f "$entry/COMPLETE" ]; then
	log "reusing $entry"
	printf '%s\n' "$entry"
	exit 0
fi

tmp=$(mktemp -d "$root/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
timings=$tmp/timings.txt
step() { # step NAME SECONDS
	log "$1 took $2 s"
	printf '%s %s\n' "$1" "$2" >>"$timings"
}

t_all=$(now)
# One source tree for both flavours: stock first, then the patch and an
# incremental rebuild.
export KAUDIT_KERNEL_TREE=$tmp/src/linux
t=$(now)
"$here/build-kernel.sh" stock "$tmp/stock"
step kernel-stock $(($(now) - t))
t=$(now)
"$here/build-kernel.sh" reverted "$tmp/reverted"
step kernel-reverted $(($(now) - t))
rm -rf "$tmp/src"
t=$(now)
"$here/build-rootfs.sh" "$tmp" "$tmp/stock" "$tmp/reverted"
step rootfs $(($(now) - t))
step total $(($(now) - t_all))

{
	printf 'key %s\n' "$key"
	pkgver linux-source-6.1
	pkgver mmdebstrap
	printf 'stock %s\nreverted %s\n' "$(cat "$tmp/stock/release")" "$(cat "$tmp/reverted/release")"
	date -u +'built %Y-%m-%dT%H:%M:%SZ'
} >"$tmp/COMPLETE"
chmod 755 "$tmp"
rm -rf "$entry"
mv -T "$tmp" "$entry"
trap - EXIT
log "built $entry"
printf '%s\n' "$entry"
