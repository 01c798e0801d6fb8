M='KAUDIT_000000000000000000000001'
set -u
set -f
umask 077
LC_ALL=C
export LC_ALL
say() { printf '%s\t%s\t%s\t%s\n' "$M" "$1" "$2" "$3"; }
fail() { say "$1" fail "$2"; exit 0; }
sha() { s=$(sha256sum < "$1") || return 1; printf '%s\n' "${s%% *}"; }
for c in sha256sum base64 tr cat; do command -v "$c" >/dev/null 2>&1 || fail tools "$c not found on the host"; done
f='/etc/sysctl.d/99-kaudit.conf'
if [ -L "$f" ]; then fail file-0 "$f is a symbolic link: kaudit edits only regular files"
elif [ -f "$f" ]; then
  s=$(sha "$f") || fail file-0 "cannot read $f"
  a=$(stat -c '%a:%U:%G' "$f" 2>/dev/null) || a=-
  c=$(base64 < "$f" | tr -d '\n') || fail file-0 "cannot read $f"
  printf '%s\t%s\tok\tpresent\t%s\t%s\t%s\n' "$M" file-0 "$s" "$a" "$c"
elif [ -e "$f" ]; then fail file-0 "$f is not a regular file"
elif [ -d '/etc/sysctl.d' ]; then say file-0 ok absent
else fail file-0 "directory /etc/sysctl.d does not exist"
fi
f='/opt/kafka/config/server.properties'
if [ -L "$f" ]; then fail file-1 "$f is a symbolic link: kaudit edits only regular files"
elif [ -f "$f" ]; then
  s=$(sha "$f") || fail file-1 "cannot read $f"
  a=$(stat -c '%a:%U:%G' "$f" 2>/dev/null) || a=-
  c=$(base64 < "$f" | tr -d '\n') || fail file-1 "cannot read $f"
  printf '%s\t%s\tok\tpresent\t%s\t%s\t%s\n' "$M" file-1 "$s" "$a" "$c"
elif [ -e "$f" ]; then fail file-1 "$f is not a regular file"
elif [ -d '/opt/kafka/config' ]; then say file-1 ok absent
else fail file-1 "directory /opt/kafka/config does not exist"
fi
v=$(cat '/proc/sys/net/core/somaxconn') || fail sysctl-0 'cannot read net.core.somaxconn'
say sysctl-0 ok "$(printf '%s' "$v" | tr '\t\n' '  ')"
say done ok -
