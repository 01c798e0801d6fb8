M='KAUDIT_000000000000000000000001'
RUN='/var/lib/kaudit/runs/20260102T030405Z-1a2b3c4d'
set -u
set -f
umask 077
LC_ALL=C
export LC_ALL
say() { printf '%s\t%s\t%s\t%s\n' "$M" "$1" "$2" "$3"; }
fail() { say "$1" fail "$2"; exit 0; }
sha() { s=$(sha256sum < "$1") || return 1; printf '%s\n' "${s%% *}"; }
cpa() {
  cp --preserve=mode,ownership,timestamps,xattr "$1" "$2" 2>/dev/null || cp -p "$1" "$2" || return 1
  if [ -e /sys/fs/selinux/enforce ] && command -v chcon >/dev/null 2>&1; then chcon --reference="$1" "$2" || return 1; fi
}
for c in sha256sum base64 cp mv rm mkdir chmod cat tr; do command -v "$c" >/dev/null 2>&1 || fail tools "$c not found on the host"; done
mkdir -p '/var/lib/kaudit/runs' || fail rundir "cannot create /var/lib/kaudit/runs"
mkdir "$RUN" || fail rundir "cannot create $RUN (a run with this id exists already?)"
pstart() { s=$(cat /proc/"$1"/stat 2>/dev/null) || return 1; s=${s##*) }; set -- $s; [ $# -ge 20 ] || return 1; printf '%s\n' "${20}"; }
st=$(pstart $$) && { printf '%s %s\n' "$$" "$st" > "$RUN"/apply.owner || fail rundir "cannot write $RUN/apply.owner"; }
say rundir ok "$RUN"
# 1. nothing changed since the read step
f='/opt/kafka/config/server.properties'
{ [ -f "$f" ] && [ ! -L "$f" ] && [ "$(sha "$f")" = 'fe3209d6d4f51935b391288a43df48d9ddece1a992597ae53387ca16611a9179' ]; } || fail 'check-file-0' "$f changed since it was read: nothing changed, re-run"
say 'check-file-0' ok -
f='/etc/sysctl.d/99-kaudit.conf'
{ [ ! -e "$f" ] && [ ! -L "$f" ]; } || fail 'check-file-1' "$f appeared since it was read: nothing changed, re-run"
say 'check-file-1' ok -
v=$(cat '/proc/sys/net/core/somaxconn') || fail 'check-sysctl-0' 'cannot read net.core.somaxconn'
v=$(printf '%s' "$v" | tr '\t\n' '  '); v=$(echo $v)
[ "$v" = '128' ] || fail 'check-sysctl-0' 'net.core.somaxconn changed since it was read: nothing changed, re-run'
say 'check-sysctl-0' ok -
v=$(cat '/proc/sys/net/ipv4/tcp_rmem') || fail 'check-sysctl-1' 'cannot read net.ipv4.tcp_rmem'
v=$(printf '%s' "$v" | tr '\t\n' '  '); v=$(echo $v)
[ "$v" = '4096 131072 6291456' ] || fail 'check-sysctl-1' 'net.ipv4.tcp_rmem changed since it was read: nothing changed, re-run'
say 'check-sysctl-1' ok -
# 2. backups
f='/opt/kafka/config/server.properties'; bk="$RUN"/file-0
cpa "$f" "$bk" || fail 'backup-file-0' "cannot copy $f to $bk"
[ "$(sha "$bk")" = 'fe3209d6d4f51935b391288a43df48d9ddece1a992597ae53387ca16611a9179' ] || fail 'backup-file-0' "backup $bk does not match $f"
say 'backup-file-0' ok "$bk"
say 'backup-file-1' ok absent
{
printf '%s\n' 'file	file-0	present	fe3209d6d4f51935b391288a43df48d9ddece1a992597ae53387ca16611a9179	/opt/kafka/config/server.properties'
printf '%s\n' 'file	-	absent	-	/etc/sysctl.d/99-kaudit.conf'
printf '%s\n' 'sysctl	sysctl-0	net.core.somaxconn	128	4096'
printf '%s\n' 'sysctl	sysctl-1	net.ipv4.tcp_rmem	4096 131072 6291456	4096 87380 134217728'
} > "$RUN"/manifest || fail backup-manifest "cannot write $RUN/manifest"
printf '%s\n' 'net.core.somaxconn = 128' > "$RUN"/sysctl-0 || fail 'backup-sysctl-0' "cannot write $RUN/sysctl-0"
say 'backup-sysctl-0' ok -
printf '%s\n' 'net.ipv4.tcp_rmem = 4096 131072 6291456' > "$RUN"/sysctl-1 || fail 'backup-sysctl-1' "cannot write $RUN/sysctl-1"
say 'backup-sysctl-1' ok -
# 3. running values
printf '%s\n' '4096' > '/proc/sys/net/core/somaxconn' || fail 'sysctl-0' 'cannot set net.core.somaxconn'
v=$(cat '/proc/sys/net/core/somaxconn') || fail 'sysctl-0' 'cannot read net.core.somaxconn'
v=$(printf '%s' "$v" | tr '\t\n' '  '); v=$(echo $v)
[ "$v" = '4096' ] || fail 'sysctl-0' "net.core.somaxconn reads back $v"
say 'sysctl-0' ok "$v"
printf '%s\n' '4096 87380 134217728' > '/proc/sys/net/ipv4/tcp_rmem' || fail 'sysctl-1' 'cannot set net.ipv4.tcp_rmem'
v=$(cat '/proc/sys/net/ipv4/tcp_rmem') || fail 'sysctl-1' 'cannot read net.ipv4.tcp_rmem'
v=$(printf '%s' "$v" | tr '\t\n' '  '); v=$(echo $v)
[ "$v" = '4096 87380 134217728' ] || fail 'sysctl-1' "net.ipv4.tcp_rmem reads back $v"
say 'sysctl-1' ok "$v"
# 4. files: temporary file in the same directory, checked, renamed
f='/opt/kafka/config/server.properties'; t='/opt/kafka/config/.server.properties.kaudit-20260102T030405Z-1a2b3c4d'
rm -f "$t" || fail 'file-0' "cannot remove $t"
cpa "$f" "$t" || { rm -f "$t"; fail 'file-0' "cannot create $t"; }
base64 -d > "$t" <<'KAUDIT_00000000000000000000eof1' || { rm -f "$t"; fail 'file-0' "cannot write $t"; }
IyBpdCdzICRIT01FIGBpZGAgJChyZWJvb3QpCmE9MQpzb2NrZXQubGlzdGVuLmJhY2tsb2cuc2l6
ZT00MDk2Cg==
KAUDIT_00000000000000000000eof1
[ "$(sha "$t")" = '0d9807e9257ed76ebe0619555b6f7ddb0a665b3be18bf29d32c7dbf9bc39c698' ] || { rm -f "$t"; fail 'file-0' "$t does not hold what was sent"; }
mv -f "$t" "$f" || { rm -f "$t"; fail 'file-0' "cannot rename $t to $f"; }
w=$(sha "$f") || fail 'file-0' "cannot read $f back"
printf 'written\t0\t%s\t-\t-\n' "$w" >> "$RUN"/manifest || fail 'file-0' "cannot write $RUN/manifest"
say 'file-0' ok "$w"
f='/etc/sysctl.d/99-kaudit.conf'; t='/etc/sysctl.d/.99-kaudit.conf.kaudit-20260102T030405Z-1a2b3c4d'
rm -f "$t" || fail 'file-1' "cannot remove $t"
( set -C; : > "$t" ) || { rm -f "$t"; fail 'file-1' "cannot create $t"; }
chmod 0644 "$t" || { rm -f "$t"; fail 'file-1' "cannot chmod $t"; }
base64 -d > "$t" <<'KAUDIT_00000000000000000000eof1' || { rm -f "$t"; fail 'file-1' "cannot write $t"; }
bmV0LmNvcmUuc29tYXhjb25uID0gNDA5Ngo=
KAUDIT_00000000000000000000eof1
[ "$(sha "$t")" = 'f36b9fc912c26c61c3e24dc759130032c68cf32cee22e5d4e3ade65ad4e56d43' ] || { rm -f "$t"; fail 'file-1' "$t does not hold what was sent"; }
mv -f "$t" "$f" || { rm -f "$t"; fail 'file-1' "cannot rename $t to $f"; }
w=$(sha "$f") || fail 'file-1' "cannot read $f back"
printf 'written\t1\t%s\t-\t-\n' "$w" >> "$RUN"/manifest || fail 'file-1' "cannot write $RUN/manifest"
say 'file-1' ok "$w"
rm -f "$RUN"/apply.owner
say done ok -
