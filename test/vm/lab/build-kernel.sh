#!/usr/bin/env bash
# build-kernel.sh FLAVOUR OUTDIR: build kaudit's lab kernel from Debian's
# linux-source-6.1 (tinyconfig + kernel.config, everything built in).
#   FLAVOUR stock     the source as Debian ships it (has the fix of 909172a)
#   FLAVOUR reverted  with revert-909172a.patch applied (has the bug)
# OUTDIR receives: bzImage, config, release (the `uname -r`), and
# modules/lib/modules/<release>/ (modules.builtin etc., from modules_install).
# Environment:
#   KAUDIT_LINUX_SOURCE  the source tarball (default /usr/src/linux-source-6.1.tar.xz)
#   KAUDIT_KERNEL_TREE   an unpacked tree to build in and keep (reused across
#                        flavours: the patch is applied or reverted as needed);
#                        default: a temporary tree under OUTDIR, removed after
#   JOBS                 make -j (default: nproc)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$here/common.sh"

[ "$#" -eq 2 ] || die "usage: $0 stock|reverted OUTDIR"
flavour=$1
outdir=$2
case "$flavour" in
stock | reverted) ;;
*) die "unknown flavour '$flavour' (stock or reverted)" ;;
esac

ensure_packages linux-source-6.1 build-essential bc flex bison libelf-dev libssl-dev kmod cpio xz-utils patch

src_tar=${KAUDIT_LINUX_SOURCE:-/usr/src/linux-source-6.1.tar.xz}
[ -f "$src_tar" ] || die "no kernel source at $src_tar"
jobs=${JOBS:-$(nproc)}
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)

tmp_tree=
if [ -n "${KAUDIT_KERNEL_TREE:-}" ]; then
	tree=$KAUDIT_KERNEL_TREE
else
	tmp_tree=$(mktemp -d "$outdir/.src.XXXXXX")
	tree=$tmp_tree/linux
fi
cleanup() {
	if [ -n "$tmp_tree" ]; then
		rm -rf "$tmp_tree"
	fi
}
trap cleanup EXIT

if [ ! -f "$tree/Makefile" ]; then
	log "unpacking $src_tar into $tree"
	mkdir -p "$tree"
	tar -xJf "$src_tar" -C "$tree" --strip-components=1
fi

# The tree's flavour: a marker file records whether the revert is applied.
marker=$tree/.kaudit-reverted
patchfile=$here/revert-909172a.patch
if [ "$flavour" = reverted ] && [ ! -e "$marker" ]; then
	log "applying $(basename "$patchfile")"
	(cd "$tree" && patch -p1 --forward --quiet <"$patchfile")
	touch "$marker"
elif [ "$flavour" = stock ] && [ -e "$marker" ]; then
	log "reverting $(basename "$patchfile")"
	(cd "$tree" && patch -p1 -R --quiet <"$patchfile")
	rm -f "$marker"
fi

sublevel=$(sed -n 's/^SUBLEVEL = //p' "$tree/Makefile")
patchlevel=$(sed -n 's/^PATCHLEVEL = //p' "$tree/Makefile")
version=$(sed -n 's/^VERSION = //p' "$tree/Makefile")
localversion=-kaudit-$flavour
release=$version.$patchlevel.$sublevel$localversion

# No Debian build identity: uname -v must not claim Debian.
unset KBUILD_BUILD_VERSION_TIMESTAMP
export KBUILD_BUILD_USER=kaudit KBUILD_BUILD_HOST=vmlab

frag=$(mktemp)
trap 'rm -f "$frag"; cleanup' EXIT
cat "$here/kernel.config" >"$frag"
printf 'CONFIG_LOCALVERSION="%s"\n' "$localversion" >>"$frag"

log "configuring $release (tinyconfig + kernel.config)"
make -C "$tree" -s tinyconfig >/dev/null
(cd "$tree" && scripts/kconfig/merge_config.sh -m .config "$frag" >/dev/null)
make -C "$tree" -s olddefconfig >/dev/null

# Every option the fragment asks for must have survived olddefconfig (a
# missing dependency silently drops it).
bad=0
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=*)
		if ! grep -qxF "$line" "$tree/.config"; then
			log "config: wanted '$line', got '$(grep -E "^(# )?${line%%=*}[= ]" "$tree/.config" || echo absent)'"
			bad=1
		fi
		;;
	"# CONFIG_"*" is not set")
		opt=${line#\# }
		opt=${opt%% *}
		if grep -qE "^$opt=" "$tree/.config"; then
			log "config: wanted $opt unset, got $(grep -E "^$opt=" "$tree/.config")"
			bad=1
		fi
		;;
	esac
done <"$frag"
if grep -qE '^CONFIG_[A-Z0-9_]+=m$' "$tree/.config"; then
	log "config: options built as modules: $(grep -E '=m$' "$tree/.config" | tr '\n' ' ')"
	bad=1
fi
[ "$bad" -eq 0 ] || die "kernel config does not match kernel.config"

log "building $release with -j$jobs"
make -C "$tree" -s -j"$jobs" bzImage modules
got=$(make -C "$tree" -s kernelrelease)
[ "$got" = "$release" ] || die "kernel release is '$got', expected '$release'"

rm -rf "$outdir/modules"
make -C "$tree" -s modules_install INSTALL_MOD_PATH="$outdir/modules" >/dev/null
[ -f "$outdir/modules/lib/modules/$release/modules.builtin" ] || die "modules_install produced no modules.builtin"
# The build and source links point into the (temporary) tree.
rm -f "$outdir/modules/lib/modules/$release/build" "$outdir/modules/lib/modules/$release/source"

cp "$tree/arch/x86/boot/bzImage" "$outdir/bzImage"
cp "$tree/.config" "$outdir/config"
printf '%s\n' "$release" >"$outdir/release"
log "built $release into $outdir"
