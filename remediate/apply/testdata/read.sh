M='KAUDIT_000000000000000000000001'
ETHTOOL='0'
FILES='0	/etc/sysctl.d/99-kaudit.conf
1	/opt/kafka/config/server.properties
'
VALUES='sysctl-0	net.core.somaxconn	sysctl	/proc/sys/net/core/somaxconn	-	-
'
say() { printf '%s\t%s\t%s\t%s\n' "$M" "$1" "$2" "$3"; }
fail() { say "$1" fail "$2"; exit 0; }
# kaudit change scripts: the functions the read, apply, rollback and
# manifest scripts share. POSIX sh (dash, busybox sh, bash).
#
# Every script is: a header kaudit renders (M, the result marker, first;
# then the script's other variables, each value validated and single-quoted
# in Go), say and fail (internal/remote), this file, then the script's own
# file. Result lines go to stdout, one per step:
#
#	<marker> TAB <step> TAB ok|fail TAB <detail>
#
# and nothing else goes to stdout; command errors go to stderr.
set -u
set -f
umask 077
LC_ALL=C
export LC_ALL
TAB='	'
NL='
'

# records DATA N FUNC: FUNC FIELD... for each line of DATA, a record of N
# tab-separated fields. No field is empty ("-" stands for none), so the
# fields split on tabs alone. FUNC runs with the default IFS.
records() {
	_rd=$1 _rn=$2 _rf=$3
	IFS=$NL
	for _r in $_rd; do
		IFS=$TAB
		# shellcheck disable=SC2086 # split on tabs, no globbing (set -f)
		set -- $_r
		unset IFS
		[ "$#" -eq "$_rn" ] || fail data "malformed record: $# fields, want $_rn"
		"$_rf" "$@"
		IFS=$NL
	done
	unset IFS
}

# sha FILE: its SHA-256 in hex, as sha256sum prints it.
sha() { s=$(sha256sum < "$1") || return 1; printf '%s\n' "${s%% *}"; }

# cpa SRC DST: a copy that keeps SRC's mode, owner, times and extended
# attributes (security.selinux among them: an atomic replace must not leave
# the temporary file's context), falling back to cp -p where cp has no
# --preserve (busybox) or the file system no xattrs; then, where SELinux is
# on and chcon exists, DST gets SRC's context explicitly.
cpa() {
	cp --preserve=mode,ownership,timestamps,xattr "$1" "$2" 2>/dev/null || cp -p "$1" "$2" || return 1
	if [ -e /sys/fs/selinux/enforce ] && command -v chcon >/dev/null 2>&1; then chcon --reference="$1" "$2" || return 1; fi
}

# durable PATH...: each PATH (a file or a directory) and the directory it is
# in reach the disk before durable returns: what was written there, and the
# names created, renamed or removed in that directory, survive a power cut
# (ext4's delayed allocation otherwise leaves a renamed file empty). sync
# FILE... fsyncs each FILE (coreutils >= 8.24, busybox >= 1.27); where sync
# takes no FILE (older coreutils ignore them and say so, some busybox builds
# refuse them) a plain sync flushes everything: slower, as durable. Which
# one is decided once per script, at the first call (SYNC_FILES).
SYNC_FILES=
durable() {
	if [ -z "$SYNC_FILES" ]; then
		if _se=$(sync -- / 2>&1 >/dev/null) && [ -z "$_se" ]; then SYNC_FILES=yes; else SYNC_FILES=no; fi
	fi
	if [ "$SYNC_FILES" != yes ]; then
		sync
		return
	fi
	for _sp in "$@"; do
		_sp=${_sp%/*}
		set -- "$@" "${_sp:-/}"
	done
	sync -- "$@"
}

# pstart PID: the start time of process PID (field 22 of /proc/PID/stat),
# or fails when there is no such process.
pstart() {
	_ps=$(cat /proc/"$1"/stat 2>/dev/null) || return 1
	_ps=${_ps##*) }
	# shellcheck disable=SC2086 # the fields of stat
	set -- $_ps
	[ "$#" -ge 20 ] || return 1
	printf '%s\n' "${20}"
}

# tools CMD...: fail step tools unless every CMD is on PATH.
tools() {
	for _t in "$@"; do
		command -v "$_t" >/dev/null 2>&1 || fail tools "$_t not found on the host"
	done
}

# The running values: HOW TARGET SETTING PROP, as kaudit renders them (see
# the VALUES records of apply.sh): sysctl /proc/sys/PATH - -; ring IFACE
# rx|tx RX:|TX:; offload IFACE tso|gso|gro|lro ETHTOOL-K-NAME; nm UUID
# SETTING NMCLI-PROPERTY. E is ethtool's path (ethtool_path).

# ethtool_path: E = where ethtool is, or fail step tools.
ethtool_path() { E=$(command -v ethtool) || fail tools "ethtool not found on the host"; }

# getv HOW TARGET SETTING PROP: v = the current value, folded (tabs and
# newlines as spaces, runs of spaces as one), or "" when it cannot be read.
getv() {
	case $1 in
	sysctl)
		v=$(tr '\t\n' '  ' 2>/dev/null < "$2") || v=
		# shellcheck disable=SC2086 # folds the spaces (set -f: no globbing)
		words $v
		;;
	ring)
		v=$("$E" -g "$2" 2>/dev/null | awk -v f="$4" '$0 ~ /^Current hardware settings/ { c = 1 } c && $1 == f { print $2; exit }')
		;;
	offload)
		v=$("$E" -k "$2" 2>/dev/null | awk -v f="$4:" '$1 == f { print $2; exit }')
		;;
	nm)
		if v=$(nmcli -g "$4" connection show "$2" 2>/dev/null); then
			case $v in ''|--|ignore|default) v='unset' ;; esac
		else
			v=
		fi
		;;
	*) v= ;;
	esac
}

# words WORD...: v = the words, separated by one space.
words() { v=$*; }

# setv HOW TARGET SETTING PROP VALUE: set a running value.
setv() {
	case $1 in
	sysctl) printf '%s\n' "$5" > "$2" ;;
	ring) "$E" -G "$2" "$3" "$5" >/dev/null ;;
	offload) "$E" -K "$2" "$3" "$5" >/dev/null ;;
	nm)
		if [ "$5" = unset ]; then nmcli connection modify "$2" "$4" ''
		else nmcli connection modify "$2" "$4" "$5"
		fi
		;;
	*) return 1 ;;
	esac
}
# kaudit read script: reads what a fix will change on a host, changes
# nothing. Its header (rendered by ReadScript) sets:
#
#	M        the result marker
#	ETHTOOL  1: find ethtool (NIC values are read), 0: not needed
#	FILES    one record per file:            I PATH
#	VALUES   one record per running value:   STEP KEY HOW TARGET SETTING PROP
#
# Records are lines of tab-separated fields, none empty ("-": none); see
# getv in lib.sh for HOW TARGET SETTING PROP. Steps and their ok detail:
#
#	file-I   absent | present SHA256 MODE:OWNER:GROUP BASE64
#	         (a symbolic link or anything but a regular file fails)
#	STEP     the value (sysctl-I: unfolded; nic-I), e.g. "4096"
#	ethtool  its path on the host (when ETHTOOL is 1)
#	done     -

tools sha256sum base64 tr cat

# read_file I PATH
read_file() {
	_st=file-$1 f=$2
	_d=${f%/*}
	if [ -L "$f" ]; then fail "$_st" "$f is a symbolic link: kaudit edits only regular files"
	elif [ -f "$f" ]; then
		s=$(sha "$f") || fail "$_st" "cannot read $f"
		a=$(stat -c '%a:%U:%G' "$f" 2>/dev/null) || a=-
		c=$(base64 < "$f" | tr -d '\n') || fail "$_st" "cannot read $f"
		printf '%s\t%s\tok\tpresent\t%s\t%s\t%s\n' "$M" "$_st" "$s" "$a" "$c"
	elif [ -e "$f" ]; then fail "$_st" "$f is not a regular file"
	elif [ -d "${_d:-/}" ]; then say "$_st" ok absent
	else fail "$_st" "directory ${_d:-/} does not exist"
	fi
}

# read_value STEP KEY HOW TARGET SETTING PROP
read_value() {
	getv "$3" "$4" "$5" "$6"
	if [ -z "$v" ]; then
		case $3 in
		sysctl) fail "$1" "cannot read $2" ;;
		*) fail "$1" "cannot read $2 with ethtool" ;;
		esac
	fi
	say "$1" ok "$v"
}

records "$FILES" 2 read_file
if [ "$ETHTOOL" = 1 ]; then
	ethtool_path
	say ethtool ok "$E"
fi
records "$VALUES" 6 read_value
say "done" ok -
