M='KAUDIT_000000000000000000000001'
RUNID='20260102T030405Z-1a2b3c4d'
RUN='/var/lib/kaudit/runs/20260102T030405Z-1a2b3c4d'
WAIT='5'
FORCE='0'
ETHTOOL='0'
FILES='restore-file-0	/opt/kafka/config/server.properties	present	fe3209d6d4f51935b391288a43df48d9ddece1a992597ae53387ca16611a9179	/var/lib/kaudit/runs/20260102T030405Z-1a2b3c4d/file-0	-
restore-file-1	/etc/sysctl.d/99-kaudit.conf	absent	-	-	-
'
VALUES='restore-sysctl-0	net.core.somaxconn	sysctl	/proc/sys/net/core/somaxconn	-	-	128	4096
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
# kaudit rollback script: restores one host from a run's backups. Its
# header (rendered by RollbackScript) sets:
#
#	M        the result marker
#	RUNID    the run's id
#	RUN      the run's directory on the host (RUNS/RUNID)
#	WAIT     seconds to wait for the run's apply script to end
#	FORCE    1: restore what changed since the run too, 0: keep it
#	ETHTOOL  1: find ethtool (NIC values are restored), 0: not needed
#	FILES    one record per file:
#	           STEP PATH STATE WANT STORED WRITTEN
#	         STATE present (WANT: its SHA-256 before the run, STORED:
#	         its copy in RUN) or absent (the run created it: WANT and
#	         STORED -); WRITTEN the SHA-256 the run left it with ("-":
#	         unknown, not checked)
#	VALUES   one record per running value:
#	           STEP KEY HOW TARGET SETTING PROP BEFORE AFTER
#	         (getv in lib.sh), BEFORE the value to restore, AFTER the one
#	         the run set
#
# Records are lines of tab-separated fields, none empty. It is idempotent,
# and goes on after a failing step (soft), so that as much as possible is
# restored. Steps and their ok detail:
#
#	apply-running   only when the run's apply script did not finish
#	                (RUN/apply.owner): seconds waited for it to end; fails,
#	                restoring nothing, when it still runs after WAIT
#	STEP            unchanged (already as before the run), restored (from
#	                its checked copy), removed (the run created it), or
#	                "kept CURRENT" (changed since the run, FORCE 0)
#	done            ok or failed
#
# What it writes, renames or removes is on the disk, with its directory,
# before the step's ok line (durable); so is a file found unchanged.

OWNER=apply.owner
EMPTY_SHA=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
rc=ok

# soft STEP DETAIL: a failed step; the script goes on.
soft() { say "$1" fail "$2"; rc=failed; }

# wait_apply: the run's apply script must be gone (apply.owner).
wait_apply() {
	[ -f "$RUN/$OWNER" ] || return 0
	read -r ap ast < "$RUN/$OWNER" || return 0
	case "$ap:$ast" in
	*[!0-9:]*|:*|*:) fail apply-running "$RUN/$OWNER is not \"pid starttime\": nothing restored" ;;
	esac
	n=0
	while [ "$(pstart "$ap")" = "$ast" ]; do
		[ "$n" -lt "$WAIT" ] || fail apply-running "the apply script of this run (pid $ap) is still running on the host: nothing restored"
		sleep 1
		n=$((n + 1))
	done
	say apply-running ok "$n"
}

# edited PATH WRITTEN: PATH no longer is what the run wrote (it is kept,
# unless FORCE).
edited() {
	[ "$FORCE" = 0 ] && [ "$2" != - ] && ! { [ -f "$1" ] && [ ! -L "$1" ] && [ "$(sha "$1")" = "$2" ]; }
}

# kept STEP PATH
kept() { say "$1" ok "kept $(sha "$2" 2>/dev/null || echo gone)"; }

# restore_file STEP PATH STATE WANT STORED WRITTEN
restore_file() {
	st=$1 f=$2 want=$4 bk=$5
	_d=${f%/*}
	_d=${_d:-/}
	if [ "$3" = absent ]; then
		if [ ! -e "$f" ] && [ ! -L "$f" ]; then
			if durable "$_d"; then say "$st" ok unchanged; else soft "$st" "cannot sync $_d"; fi
		elif edited "$f" "$6"; then kept "$st" "$f"
		elif ! rm -f "$f"; then soft "$st" "cannot remove $f"
		elif ! durable "$_d"; then soft "$st" "$f removed, but cannot sync $_d"
		else say "$st" ok removed
		fi
		return
	fi
	t=${_d}/.${f##*/}.kaudit-restore-$RUNID
	if [ -f "$f" ] && [ ! -L "$f" ] && [ "$(sha "$f")" = "$want" ]; then
		if durable "$f"; then say "$st" ok unchanged; else soft "$st" "cannot sync $f"; fi
	elif edited "$f" "$6"; then kept "$st" "$f"
	elif [ ! -f "$bk" ]; then soft "$st" "backup $bk is missing: $f not restored"
	elif [ ! -s "$bk" ] && [ "$want" != "$EMPTY_SHA" ]; then soft "$st" "backup $bk is empty (0 bytes: lost in a crash?): $f not restored"
	elif [ "$(sha "$bk")" != "$want" ]; then soft "$st" "backup $bk does not match the recorded sha256: $f not restored"
	elif ! { rm -f "$t" && cpa "$bk" "$t"; }; then rm -f "$t"; soft "$st" "cannot create $t"
	elif [ "$(sha "$t")" != "$want" ]; then rm -f "$t"; soft "$st" "$t does not match the backup"
	elif ! durable "$t"; then rm -f "$t"; soft "$st" "cannot sync $t"
	elif ! mv -f "$t" "$f"; then rm -f "$t"; soft "$st" "cannot rename $t to $f"
	elif ! durable "$f"; then soft "$st" "$f restored, but cannot sync it"
	elif [ "$(sha "$f")" != "$want" ]; then soft "$st" "$f does not match the backup after restoring"
	else say "$st" ok restored
	fi
}

# restore_value STEP KEY HOW TARGET SETTING PROP BEFORE AFTER
restore_value() {
	getv "$3" "$4" "$5" "$6"
	# shellcheck disable=SC2154 # v: set by getv (lib.sh)
	if [ "$v" = "$7" ]; then say "$1" ok unchanged
	elif [ "$FORCE" = 0 ] && [ "$v" != "$8" ]; then say "$1" ok "kept $v"
	elif ! setv "$3" "$4" "$5" "$6" "$7"; then soft "$1" "cannot set $2"
	else
		getv "$3" "$4" "$5" "$6"
		if [ "$v" = "$7" ]; then say "$1" ok restored; else soft "$1" "$2 reads back $v after restoring"; fi
	fi
}

tools sha256sum cp mv rm cat tr sync
wait_apply
records "$FILES" 6 restore_file
if [ -n "$VALUES" ] && [ "$ETHTOOL" = 1 ]; then ethtool_path; fi
records "$VALUES" 8 restore_value
say "done" ok "$rc"
