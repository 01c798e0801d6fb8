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
rc=ok
soft() { say "$1" fail "$2"; rc=failed; }
for c in sha256sum cp mv rm cat tr; do command -v "$c" >/dev/null 2>&1 || fail tools "$c not found on the host"; done
pstart() { s=$(cat /proc/"$1"/stat 2>/dev/null) || return 1; s=${s##*) }; set -- $s; [ $# -ge 20 ] || return 1; printf '%s\n' "${20}"; }
if [ -f "$RUN"/apply.owner ] && read -r ap ast < "$RUN"/apply.owner; then
  case "$ap:$ast" in
  *[!0-9:]*|:*|*:) fail apply-running "$RUN/apply.owner is not \"pid starttime\": nothing restored" ;;
  esac
  n=0
  while [ "$(pstart "$ap")" = "$ast" ]; do
    [ "$n" -lt 5 ] || fail apply-running "the apply script of this run (pid $ap) is still running on the host: nothing restored"
    sleep 1
    n=$((n+1))
  done
  say apply-running ok "$n"
fi
f='/opt/kafka/config/server.properties'
bk='/var/lib/kaudit/runs/20260102T030405Z-1a2b3c4d/file-0'; t='/opt/kafka/config/.server.properties.kaudit-restore-20260102T030405Z-1a2b3c4d'; want='fe3209d6d4f51935b391288a43df48d9ddece1a992597ae53387ca16611a9179'
if [ -f "$f" ] && [ ! -L "$f" ] && [ "$(sha "$f")" = "$want" ]; then say 'restore-file-0' ok unchanged
elif false; then say 'restore-file-0' ok "kept $(sha "$f" 2>/dev/null || echo gone)"
elif [ ! -f "$bk" ]; then soft 'restore-file-0' "backup $bk is missing: $f not restored"
elif [ "$(sha "$bk")" != "$want" ]; then soft 'restore-file-0' "backup $bk does not match the recorded sha256: $f not restored"
elif ! { rm -f "$t" && cpa "$bk" "$t"; }; then rm -f "$t"; soft 'restore-file-0' "cannot create $t"
elif [ "$(sha "$t")" != "$want" ]; then rm -f "$t"; soft 'restore-file-0' "$t does not match the backup"
elif ! mv -f "$t" "$f"; then rm -f "$t"; soft 'restore-file-0' "cannot rename $t to $f"
elif [ "$(sha "$f")" != "$want" ]; then soft 'restore-file-0' "$f does not match the backup after restoring"
else say 'restore-file-0' ok restored
fi
f='/etc/sysctl.d/99-kaudit.conf'
if ! [ -e "$f" ] && ! [ -L "$f" ]; then say 'restore-file-1' ok unchanged
elif false; then say 'restore-file-1' ok "kept $(sha "$f" 2>/dev/null || echo gone)"
elif rm -f "$f"; then say 'restore-file-1' ok removed
else soft 'restore-file-1' "cannot remove $f"
fi
want='128'
v=$(cat '/proc/sys/net/core/somaxconn' 2>/dev/null | tr '\t\n' '  '); v=$(echo $v)
if [ "$v" = "$want" ]; then say 'restore-sysctl-0' ok unchanged
elif [ "$v" != '4096' ]; then say 'restore-sysctl-0' ok "kept $v"
elif ! printf '%s\n' '128' > '/proc/sys/net/core/somaxconn'; then soft 'restore-sysctl-0' 'cannot set net.core.somaxconn'
else v=$(cat '/proc/sys/net/core/somaxconn' 2>/dev/null | tr '\t\n' '  '); v=$(echo $v)
  if [ "$v" = "$want" ]; then say 'restore-sysctl-0' ok restored; else soft 'restore-sysctl-0' "net.core.somaxconn reads back $v after restoring"; fi
fi
say done ok "$rc"
