#!/usr/bin/env bash
# build-rootfs.sh OUTDIR [KERNELDIR...]: build the lab's Debian 12 (bookworm)
# guest image with mmdebstrap, from the Debian mirror this machine's apt is
# configured with. Each KERNELDIR is an OUTDIR of build-kernel.sh; its
# modules tree (lib/modules/<release>) is copied into the guest.
# OUTDIR receives:
#   rootfs.img                a raw ext4 image (sparse), / of the guest on /dev/vda
#   id_ed25519{,.pub}         the lab's client key (root and user kaudit accept it)
#   ssh_host_ed25519_key.pub  the guest's fixed host key (for known_hosts)
#   packages.txt              dpkg -l of the guest
# Environment: KAUDIT_ROOTFS_SIZE (default 1536M), KAUDIT_SUITE (default bookworm),
# KAUDIT_WAIT_KERNELS (seconds to wait for the KERNELDIRs to be built; default 0).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$here/common.sh"

[ "$#" -ge 1 ] || die "usage: $0 OUTDIR [KERNELDIR...]"
outdir=$1
shift
size=${KAUDIT_ROOTFS_SIZE:-1536M}
suite=${KAUDIT_SUITE:-bookworm}
[ "$(id -u)" -eq 0 ] || die "must run as root (mmdebstrap into a directory, image ownership)"

ensure_packages mmdebstrap e2fsprogs openssh-client debian-archive-keyring

mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
work=$(mktemp -d "$outdir/.rootfs.XXXXXX")
trap 'rm -rf "$work"' EXIT
tree=$work/tree

# The Debian entries of this machine's apt sources (deb822 .sources
# paragraphs and one-line .list entries whose URI is a Debian archive);
# third-party repositories are left out.
sources=$work/debian.sources
: >"$sources"
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] || continue
	case "$f" in
	*.sources)
		awk 'BEGIN { RS = ""; ORS = "\n\n" }
			/(^|\n)URIs:[^\n]*\/debian(-security)?\/?([ \n]|$)/ && /(^|\n)Types:[^\n]*deb([ \n]|$)/ { print }' "$f" >>"$sources"
		;;
	*.list)
		awk '$1 == "deb" && $0 ~ /\/debian(-security)?\/? / {
				n = 2; if ($2 ~ /^\[/) { while ($n !~ /\]$/) n++; n++ }
				uri = $n; suite = $(n + 1); comps = ""
				for (i = n + 2; i <= NF; i++) comps = comps " " $i
				printf "Types: deb\nURIs: %s\nSuites: %s\nComponents:%s\n\n", uri, suite, comps
			}' "$f" >>"$sources"
		;;
	esac
done
[ -s "$sources" ] || die "no Debian archive in /etc/apt/sources.list(.d): cannot choose a mirror"
log "mirror entries: $(grep -h '^URIs:' "$sources" | sort -u | tr '\n' ' ')"

# Keys: a per-lab client key and a fixed host key, made here so tests can
# write a real known_hosts line.
rm -f "$outdir/id_ed25519" "$outdir/id_ed25519.pub" "$work/ssh_host_ed25519_key"
ssh-keygen -q -t ed25519 -N '' -C kaudit-vmlab-client -f "$outdir/id_ed25519"
ssh-keygen -q -t ed25519 -N '' -C kaudit-vmlab-host -f "$work/ssh_host_ed25519_key"

pkgs=systemd,systemd-sysv,udev,dbus,openssh-server,python3-minimal,iproute2,ethtool,procps,sudo,kmod,netbase
log "mmdebstrap $suite ($pkgs)"
t0=$(now)
mmdebstrap --quiet --variant=apt --include="$pkgs" \
	--dpkgopt='path-exclude=/usr/share/man/*' \
	--dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-include=/usr/share/doc/*/copyright' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	"$suite" "$tree" "$sources"
log "mmdebstrap took $(($(now) - t0)) s"

log "customising the tree"
printf 'kaudit-vm\n' >"$tree/etc/hostname"
cat >"$tree/etc/hosts" <<'HOSTS'
127.0.0.1	localhost
127.0.1.1	kaudit-vm
::1		localhost ip6-localhost ip6-loopback
HOSTS
# / on /dev/vda, ext4 with its default options (delayed allocation on: the
# power-cut tests rely on it).
printf '/dev/vda\t/\text4\tdefaults\t0\t1\n' >"$tree/etc/fstab"
# A fresh machine-id per guest (written at its first boot); no first-boot
# prompts on the console.
: >"$tree/etc/machine-id"
rm -f "$tree/var/lib/dbus/machine-id"
ln -sf /usr/share/zoneinfo/Etc/UTC "$tree/etc/localtime"

# SSH: keys only, the fixed ed25519 host key only.
rm -f "$tree"/etc/ssh/ssh_host_*
install -m 600 "$work/ssh_host_ed25519_key" "$tree/etc/ssh/ssh_host_ed25519_key"
install -m 644 "$work/ssh_host_ed25519_key.pub" "$tree/etc/ssh/ssh_host_ed25519_key.pub"
cp "$work/ssh_host_ed25519_key.pub" "$outdir/ssh_host_ed25519_key.pub"
cat >"$tree/etc/ssh/sshd_config.d/kaudit-vmlab.conf" <<'SSHD'
HostKey /etc/ssh/ssh_host_ed25519_key
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UseDNS no
MaxStartups 100:30:200
SSHD
install -d -m 700 "$tree/root/.ssh"
install -m 600 "$outdir/id_ed25519.pub" "$tree/root/.ssh/authorized_keys"
chroot "$tree" passwd -q -l root >/dev/null
# A second login with passwordless sudo, for kaudit's sudo paths.
chroot "$tree" useradd -m -s /bin/bash kaudit
install -d -m 700 -o 1000 -g 1000 "$tree/home/kaudit/.ssh"
install -m 600 -o 1000 -g 1000 "$outdir/id_ed25519.pub" "$tree/home/kaudit/.ssh/authorized_keys"
printf 'kaudit ALL=(ALL) NOPASSWD: ALL\n' >"$tree/etc/sudoers.d/kaudit"
chmod 440 "$tree/etc/sudoers.d/kaudit"

# Network: the first NIC (virtio-net with the lab's fixed MAC, on QEMU's
# user-mode net) gets the address QEMU's DHCP would give, statically (no
# DHCP wait); every other NIC stays unconfigured.
cat >"$tree/etc/systemd/network/10-kaudit-lab.network" <<'NET'
[Match]
MACAddress=52:54:00:6b:61:00

[Network]
Address=10.0.2.15/24
Gateway=10.0.2.2
DNS=10.0.2.3
LinkLocalAddressing=no
IPv6AcceptRA=no
NET
chroot "$tree" systemctl enable -q systemd-networkd.service
chroot "$tree" systemctl enable -q ssh.service
# Units that are slow or useless in a throw-away guest.
for u in apt-daily.timer apt-daily-upgrade.timer apt-daily.service apt-daily-upgrade.service \
	man-db.timer man-db.service e2scrub_all.timer e2scrub_all.service e2scrub_reap.service \
	fstrim.timer dpkg-db-backup.timer logrotate.timer systemd-networkd-wait-online.service \
	systemd-firstboot.service systemd-timesyncd.service getty@tty1.service; do
	chroot "$tree" systemctl mask -q "$u"
done
# Kernel module trees (modules.builtin etc.) of the lab's kernels. With
# KAUDIT_WAIT_KERNELS=SECONDS the kernels may still be building (prepare.sh
# overlaps them with this script): wait for each KERNELDIR/release, which
# build-kernel.sh writes last, or KERNELDIR/FAILED.
wait_s=${KAUDIT_WAIT_KERNELS:-0}
for kdir in "$@"; do
	t0=$(now)
	while [ ! -f "$kdir/release" ]; do
		[ ! -e "$kdir/FAILED" ] || die "kernel build into $kdir failed"
		[ $(($(now) - t0)) -lt "$wait_s" ] || die "no kernel in $kdir (waited ${wait_s} s)"
		sleep 5
	done
	if [ $(($(now) - t0)) -gt 0 ]; then
		log "waited $(($(now) - t0)) s for the kernel in $kdir"
	fi
done
for kdir in "$@"; do
	for m in "$kdir"/modules/lib/modules/*; do
		[ -d "$m" ] || die "no modules tree in $kdir"
		mkdir -p "$tree/lib/modules"
		cp -a "$m" "$tree/lib/modules/"
	done
done
# shellcheck disable=SC2016 # dpkg-query's format, not shell
chroot "$tree" dpkg-query -W -f='${Package} ${Version}\n' >"$outdir/packages.txt"
rm -rf "$tree/var/cache/apt/archives/"*.deb "$tree/var/lib/apt/lists/"*_Packages

log "making the ext4 image ($size)"
rm -f "$outdir/rootfs.img"
mkfs.ext4 -q -F -L kaudit-root -E root_owner=0:0 -d "$tree" "$outdir/rootfs.img" "$size"
log "image: $(du -h --apparent-size "$outdir/rootfs.img" | cut -f1) apparent, $(du -h "$outdir/rootfs.img" | cut -f1) used"
