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
# KAUDIT_KERNEL_TREE: see build-kernel.sh (kept when set here).
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
	printf '%s %s s wall\n' "$1" "$2" >>"$timings"
}

t_all=$(now)
# Wall and CPU time of each step (bash's time: real, user, sys of children).
TIMEFORMAT='%R s wall, %U s user, %S s sys'
exec 3>&2
timed() { # timed NAME COMMAND...: run COMMAND, append its times to timings.txt
	local name=$1 t
	shift
	t=$({ time "$@" 2>&3 >&3; } 2>&1) || return 1
	log "$name took $t"
	printf '%s %s\n' "$name" "$t" >>"$timings"
}
# One source tree for both flavours: stock first, then the patch and an
# incremental rebuild. A KAUDIT_KERNEL_TREE set by the caller is used and
# kept (later builds are incremental); otherwise a temporary tree is.
if [ -z "${KAUDIT_KERNEL_TREE:-}" ]; then
	export KAUDIT_KERNEL_TREE=$tmp/src/linux
fi
# The kernels build in the background while mmdebstrap runs; the rootfs
# script waits for their module trees before it makes the image.
(
	timed kernel-stock "$here/build-kernel.sh" stock "$tmp/stock" || { mkdir -p "$tmp/stock" && touch "$tmp/stock/FAILED"; }
	if [ -f "$tmp/stock/release" ]; then
		timed kernel-reverted "$here/build-kernel.sh" reverted "$tmp/reverted" || { mkdir -p "$tmp/reverted" && touch "$tmp/reverted/FAILED"; }
	else
		mkdir -p "$tmp/reverted" && touch "$tmp/reverted/FAILED"
	fi
) &
kernels=$!
rootfs_ok=0
export KAUDIT_WAIT_KERNELS=${KAUDIT_WAIT_KERNELS:-7200}
timed rootfs "$here/build-rootfs.sh" "$tmp" "$tmp/stock" "$tmp/reverted" || rootfs_ok=1
wait "$kernels"
[ "$rootfs_ok" -eq 0 ] || die "building the root image failed"
if [ ! -f "$tmp/stock/release" ] || [ ! -f "$tmp/reverted/release" ]; then
	die "a kernel build failed"
fi
rm -rf "$tmp/src"
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
