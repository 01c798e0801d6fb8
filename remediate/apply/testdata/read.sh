M='KAUDIT_000000000000000000000001'
LEASE='0'
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

# The host lock and the run's lease. Their header variables (rendered by
# lockHeader in Go):
#
#	KDIR      kaudit's directory on the host (/var/lib/kaudit)
#	LOCKWAIT  seconds to wait for KDIR/lock
#	RUNID     the run's id
#	OPERATOR  who runs it: user@hostname, of kaudit's machine
#	KPID      kaudit's pid on that machine, KPSTART its start time there
#	TTL       seconds the lease lasts (the run's per-host timeouts)
#	TAKEOVER  a run whose live lease this script may take over ("-":
#	          none): its kaudit is gone (kaudit saw it on its machine)
#
# KDIR/lock: every kaudit script that reads for a change, changes or
# restores holds it for its whole execution, so two never run on a host
# at once: flock(1) on it (released by the kernel when the script dies,
# its connection gone or not), or where there is no flock a directory
# KDIR/lock.d holding "PID STARTTIME" of its holder (taken over once that
# process is gone).
#
# KDIR/lease: the run that is changing the host, from its read script to
# its last step there: one line, RUNID OPERATOR KPID KPSTART STARTED EXPIRES
# (tab-separated; STARTED and EXPIRES in seconds since the epoch, the
# host's clock). Another run's read is refused while it is live; an
# expired one (its run is gone, or late) is taken over and said so.
#
# lock_host returns 1 when another script held the lock for LOCKWAIT
# seconds (lock_busy says so).
LOCK_DIR=
# ON_EXIT: a function the script runs as it ends (a failing step's exit
# too), before the lock directory is removed.
ON_EXIT=
at_exit() {
	if [ -n "$ON_EXIT" ]; then "$ON_EXIT"; fi
	if [ -n "$LOCK_DIR" ]; then rm -rf "$LOCK_DIR"; fi
}
trap at_exit EXIT
lock_host() {
	mkdir -p "$KDIR" || fail lock "cannot create $KDIR"
	if command -v flock >/dev/null 2>&1; then
		exec 9>>"$KDIR/lock" || fail lock "cannot open $KDIR/lock"
		# flock -n in a loop, not flock -w: -w needs POSIX timers
		# (timer_create), which a kernel without CONFIG_POSIX_TIMERS does
		# not have ("flock: cannot set up timer: Function not
		# implemented", seen on the VM lab's 6.1). The lock belongs to fd
		# 9's open file: it stays held after flock(1) exits.
		_n=0
		while :; do
			_e=0
			_m=$(flock -n 9 2>&1) || _e=$?
			[ "$_e" -eq 0 ] && return 0
			[ "$_e" -eq 1 ] || fail lock "flock on $KDIR/lock failed (exit $_e: $_m): nothing changed"
			[ "$_n" -lt "$LOCKWAIT" ] || return 1
			sleep 1
			_n=$((_n + 1))
		done
	fi
	_n=0
	while ! mkdir "$KDIR/lock.d" 2>/dev/null; do
		if read -r _lp _ls < "$KDIR/lock.d/owner" 2>/dev/null && [ "$(pstart "$_lp")" != "$_ls" ]; then
			rm -rf "$KDIR/lock.d"
			continue
		fi
		[ "$_n" -lt "$LOCKWAIT" ] || return 1
		sleep 1
		_n=$((_n + 1))
	done
	LOCK_DIR=$KDIR/lock.d
	printf '%s %s\n' "$$" "$(pstart $$)" > "$LOCK_DIR/owner" || :
}

# lock_busy: fail step lock, naming the run whose lease the host has.
lock_busy() {
	lease_get
	_by=
	if [ -n "$lid" ] && [ "$lid" != '?' ]; then _by=" (the lease names run $lid, $lop)"; fi
	fail lock "another kaudit script has held $KDIR/lock for ${LOCKWAIT}s$_by: nothing changed"
}

# lease_get: lid lop lpid lpst lstart lexp from KDIR/lease; lid is ""
# when there is none, "?" when it is malformed (a crash while writing it).
lease_get() {
	lid='' lop='' lpid='' lpst='' lstart='' lexp=''
	[ -e "$KDIR/lease" ] || return 0
	lid='?'
	_l=
	IFS= read -r _l < "$KDIR/lease" || [ -n "$_l" ] || return 0
	IFS=$TAB
	# shellcheck disable=SC2086 # split on tabs, no globbing (set -f)
	set -- $_l
	unset IFS
	[ "$#" -eq 6 ] || return 0
	case $1 in '' | *[!A-Za-z0-9_-]*) return 0 ;; esac
	case $2 in '' | *[!A-Za-z0-9@._-]*) return 0 ;; esac
	case $3$4$5$6 in *[!0-9]*) return 0 ;; esac
	case "$3:$4:$5:$6" in *::* | :* | *:) return 0 ;; esac
	lid=$1 lop=$2 lpid=$3 lpst=$4 lstart=$5 lexp=$6
}

# lease_live: the lease read by lease_get is another run's and has not
# expired.
lease_live() {
	[ -n "$lid" ] && [ "$lid" != '?' ] && [ "$lid" != "$RUNID" ] && [ "$(date +%s)" -lt "$lexp" ]
}

# lease_held STEP: fail STEP, naming the run that holds the lease, when
# it is another's, live, and not TAKEOVER.
lease_held() {
	if lease_live && [ "$lid" != "$TAKEOVER" ]; then
		fail "$1" "held$TAB$lid$TAB$lop$TAB$lstart$TAB$lexp$TAB$lpid$TAB$lpst"
	fi
}

# lease_take: KDIR/lease is this run's, expiring TTL seconds from now; a
# lease of another run that it replaces is said (step stale).
lease_take() {
	lease_get
	lease_held lease
	_now=$(date +%s) || fail lease "cannot read the host's clock"
	_since=$_now
	if [ "$lid" = "$RUNID" ]; then _since=$lstart
	elif [ "$lid" = '?' ]; then say stale ok "malformed"
	elif [ -n "$lid" ]; then say stale ok "$lid$TAB$lop$TAB$lstart$TAB$lexp"
	fi
	# Written in place (a full disk has no room for a second copy); a torn
	# write reads as malformed, which is stale.
	if ! printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$RUNID" "$OPERATOR" "$KPID" "$KPSTART" "$_since" "$((_now + TTL))" > "$KDIR/lease" 2>/dev/null; then
		fail lease "cannot write $KDIR/lease ($(space_of "$KDIR"))"
	fi
	durable "$KDIR/lease" || fail lease "cannot sync $KDIR/lease"
	say lease ok "$_since$TAB$((_now + TTL))"
}

# lease_mine STEP: fail STEP unless KDIR/lease is this run's (the read
# script took it; nobody took it over since).
lease_mine() {
	lease_get
	case $lid in
	"$RUNID") ;;
	'') fail "$1" "lost$TAB-" ;;
	*) fail "$1" "lost$TAB$lid$TAB$lop$TAB$lstart$TAB$lexp" ;;
	esac
}

# lease_release: KDIR/lease removed when it is this run's.
lease_release() {
	lease_get
	[ "$lid" = "$RUNID" ] || return 0
	rm -f "$KDIR/lease" && durable "$KDIR"
}

# space_of DIR: "A of T KiB free" for the file system DIR is on.
space_of() {
	# shellcheck disable=SC2046 # the two numbers
	set -- $(df -Pk "$1" 2>/dev/null | awk 'NR == 2 { print $2, $4 }')
	if [ "$#" -eq 2 ]; then printf '%s of %s KiB free' "$2" "$1"; else printf 'free space unknown'; fi
}

# cleanup: what runs that are gone left on the host, removed (call it
# holding the lock and the lease: then no other kaudit script runs): the
# apply.owner of an apply script that is gone; the directory of a run
# that stopped before its manifest was on the disk (it changed nothing;
# its backups are of no use); each temporary file kaudit makes beside a
# file of FILES (records whose field 2 is the PATH).
cleanup() {
	_cl=
	set +f
	for _o in "$RUNS"/*/apply.owner; do
		[ -f "$_o" ] || continue
		_op='' _ost=''
		read -r _op _ost < "$_o" 2>/dev/null || :
		case $_op in '' | *[!0-9]*) ;; *) [ "$(pstart "$_op")" != "$_ost" ] || continue ;; esac
		rm -f "$_o" && say cleaned ok "$_o"
		_cl=$_cl$NL${_o%/*}
	done
	for _d in "$RUNS"/*; do
		if [ -d "$_d" ] && [ ! -e "$_d/manifest" ] && [ ! -e "$_d/apply.owner" ]; then
			rm -rf "$_d" && say cleaned ok "$_d"
			_cl=$_cl$NL$_d
		fi
	done
	set -f
	records "$FILES" "$1" cleanup_tmp
	IFS=$NL
	# shellcheck disable=SC2086 # one path a line, no globbing (set -f)
	set -- $_cl
	unset IFS
	[ "$#" -eq 0 ] || durable "$@" 2>/dev/null || :
}

# cleanup_tmp I PATH ...: the temporary files of PATH (.NAME.kaudit-*)
# removed.
cleanup_tmp() {
	_cd=${2%/*}
	_cd=${_cd:-/}
	_cb=${2##*/}
	set +f
	for _t in "$_cd"/."$_cb".kaudit-*; do
		[ -f "$_t" ] || continue
		rm -f "$_t" && say cleaned ok "$_t"
		_cl=$_cl$NL$_t
	done
	set -f
}
# kaudit read script: reads what a fix will change on a host, changes
# nothing. Its header (rendered by ReadScript) sets:
#
#	M        the result marker
#	LEASE    1: take the host lock and the run's lease first (the read
#	         step of a change; lock_host, lease_take in lib.sh, with
#	         their variables, and RUNS), 0: only read (a verify)
#	ETHTOOL  1: find ethtool (NIC values are read), 0: not needed
#	FILES    one record per file:            I PATH
#	VALUES   one record per running value:   STEP KEY HOW TARGET SETTING PROP
#
# Records are lines of tab-separated fields, none empty ("-": none); see
# getv in lib.sh for HOW TARGET SETTING PROP. Steps and their ok detail:
#
#	lease    STARTED EXPIRES: the run's lease (fails "held RUNID OPERATOR
#	         STARTED EXPIRES PID PSTART" while another run holds it)
#	stale    the expired lease it replaced: RUNID OPERATOR STARTED EXPIRES
#	cleaned  PATH: one per leftover of a run that is gone (cleanup)
#	file-I   absent | present SHA256 MODE:OWNER:GROUP BASE64
#	         (a symbolic link or anything but a regular file fails)
#	STEP     the value (sysctl-I: unfolded; nic-I), e.g. "4096"
#	ethtool  its path on the host (when ETHTOOL is 1)
#	done     -

tools sha256sum base64 tr cat
if [ "$LEASE" = 1 ]; then
	lock_host || lock_busy
	lease_take
	cleanup 2
fi

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
	else
		# A systemd drop-in directory the apply step creates (make_dropin_dir).
		case "$f" in /etc/systemd/system/*.service.d/*) [ -d /etc/systemd/system ] && { say "$_st" ok absent; return; } ;; esac
		fail "$_st" "directory ${_d:-/} does not exist"
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
