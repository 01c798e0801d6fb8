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
# at once: flock(1) on it (released by the kernel when the script and
# every process it started are gone), or where there is no flock a
# directory KDIR/lock.d (taken over once its holder is gone). The holder
# writes "PID STARTTIME SCRIPT" (in KDIR/lock under flock, emptied as it
# ends; else in KDIR/lock.d/owner): which script holds the host now, not
# which run.
#
# KDIR/lease: the one record of which run holds the host and until when,
# from its read script to its last step there: one line, RUNID OPERATOR
# KPID KPSTART STARTED EXPIRES (tab-separated; STARTED and EXPIRES in
# seconds since the epoch, the host's clock). Every step that reports a
# lease prints these six fields as they are, after its word (held, lost,
# taken, found). Another run's read is refused while it is live; an
# expired one (its run is gone, or late) is taken over and said so.
#
# hold SCRIPT MODE is the one way a script takes them: the lock (waiting
# LOCKWAIT seconds; lock_busy when another script keeps it), then the
# lease as MODE wants it, said in step lease:
#
#	take     the read step: the lease made this run's (lease_take); ok
#	         STARTED EXPIRES
#	mine     the apply step: the lease must still be this run's (fails
#	         "lost [LEASE]": taken over, or gone); ok -
#	free     a restore or a restart: another run's live lease refuses it
#	         (fails "held LEASE"); ok free
#	release  the release step: the lease removed when it is this run's;
#	         ok released, or not-held
#
# A failure of the files themselves is step lock.
LOCK_DIR=
LOCK_REC=
SCRIPT=
# ON_EXIT: a function the script runs as it ends (a failing step's exit
# too), before the lock directory is removed.
ON_EXIT=
at_exit() {
	if [ -n "$ON_EXIT" ]; then "$ON_EXIT"; fi
	if [ -n "$LOCK_REC" ]; then : > "$LOCK_REC" 2>/dev/null || :; fi
	if [ -n "$LOCK_DIR" ]; then rm -rf "$LOCK_DIR"; fi
}
trap at_exit EXIT
hold() {
	SCRIPT=$1
	lock_host || lock_busy
	lease_get
	case $2 in
	take) lease_take ;;
	mine) lease_mine ;;
	free)
		lease_held
		say lease ok free
		;;
	release) lease_release || fail lock "cannot remove $KDIR/lease" ;;
	*) fail lock "unknown lease mode $2" ;;
	esac
	# Under flock the holder record comes after the lease: on a full disk
	# the lease (and the apply's space check) go first; a record that
	# does not fit only makes lock_busy say less. Emptied at the end.
	if [ -z "$LOCK_DIR" ] && printf '%s\n' "$_me" > "$KDIR/lock" 2>/dev/null; then LOCK_REC=$KDIR/lock; fi
}

# lock_host: KDIR/lock held by this script (without flock, its holder
# record written); returns 1 when another script held it for LOCKWAIT
# seconds.
lock_host() {
	mkdir -p "$KDIR" || fail lock "cannot create $KDIR"
	_me="$$ $(pstart $$) $SCRIPT"
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
		if ! lock_holder && [ -n "$hpid" ]; then
			rm -rf "$KDIR/lock.d"
			continue
		fi
		[ "$_n" -lt "$LOCKWAIT" ] || return 1
		sleep 1
		_n=$((_n + 1))
	done
	LOCK_DIR=$KDIR/lock.d
	printf '%s\n' "$_me" > "$LOCK_DIR/owner" || :
}

# lock_holder: hpid hpst hscr, the lock's holder as its record says (an
# older kaudit's lock.d/owner has no SCRIPT); hpid "" when there is no
# record. True when that process still runs.
lock_holder() {
	hpid='' hpst='' hscr=''
	_hf=$KDIR/lock.d/owner
	if command -v flock >/dev/null 2>&1; then _hf=$KDIR/lock; fi
	read -r hpid hpst hscr < "$_hf" 2>/dev/null || :
	case "$hpid:$hpst" in *[!0-9:]* | :* | *:) hpid='' ;; esac
	[ -n "$hpid" ] && [ "$(pstart "$hpid")" = "$hpst" ]
}

# lock_busy: another script kept the lock for LOCKWAIT seconds. When it
# is this run's apply script (its connection was cut; sshd does not kill
# it), fail step apply-running; else fail step lock, naming the holder
# and the run the lease names.
lock_busy() {
	lease_get
	if lock_holder && [ "$hscr" = apply ] && [ "$lid" = "$RUNID" ]; then
		_w=changed
		[ "$SCRIPT" != rollback ] || _w=restored
		fail apply-running "the apply script of this run (pid $hpid) is still running on the host: nothing $_w"
	fi
	_by=
	if [ -n "$hscr" ] && [ -n "$hpid" ]; then _by=" (its $hscr script, pid $hpid)"; fi
	if [ -n "$lid" ] && [ "$lid" != '?' ]; then _by="$_by (the lease names run $lid, $lop)"; fi
	fail lock "another kaudit script has held $KDIR/lock for ${LOCKWAIT}s$_by: nothing changed"
}

# lease_get: lid lop lstart lexp from KDIR/lease, and LEASE its
# six fields as a detail; lid is "" when there is none, "?" when it is
# malformed (a crash while writing it).
lease_get() {
	lid='' lop='' lstart='' lexp='' LEASE=
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
	lid=$1 lop=$2 lstart=$5 lexp=$6
	LEASE=$1$TAB$2$TAB$3$TAB$4$TAB$5$TAB$6
}

# lease_live: the lease read by lease_get is another run's and has not
# expired.
lease_live() {
	[ -n "$lid" ] && [ "$lid" != '?' ] && [ "$lid" != "$RUNID" ] && [ "$(date +%s)" -lt "$lexp" ]
}

# lease_held: fail step lease, naming the run that holds it, when it is
# another's, live, and not TAKEOVER.
lease_held() {
	if lease_live && [ "$lid" != "$TAKEOVER" ]; then fail lease "held$TAB$LEASE"; fi
}

# lease_take: KDIR/lease is this run's, expiring TTL seconds from now; a
# lease of another run that it replaces is said (step stale).
lease_take() {
	lease_held
	_now=$(date +%s) || fail lock "cannot read the host's clock"
	_since=$_now
	if [ "$lid" = "$RUNID" ]; then _since=$lstart
	elif [ "$lid" = '?' ]; then say stale ok malformed
	elif [ -n "$lid" ]; then say stale ok "taken$TAB$LEASE"
	fi
	# Written in place (a full disk has no room for a second copy); a torn
	# write reads as malformed, which is stale.
	if ! printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$RUNID" "$OPERATOR" "$KPID" "$KPSTART" "$_since" "$((_now + TTL))" > "$KDIR/lease" 2>/dev/null; then
		fail lock "cannot write $KDIR/lease ($(space_of "$KDIR"))"
	fi
	durable "$KDIR/lease" || fail lock "cannot sync $KDIR/lease"
	say lease ok "$_since$TAB$((_now + TTL))"
}

# lease_mine: fail step lease unless KDIR/lease is this run's (the read
# script took it; nobody took it over since).
lease_mine() {
	case $lid in
	"$RUNID") say lease ok - ;;
	'' | '?') fail lease lost ;;
	*) fail lease "lost$TAB$LEASE" ;;
	esac
}

# lease_release: KDIR/lease removed, on the disk, when it is this run's,
# and said; returns 1 when it cannot be.
lease_release() {
	if [ "$lid" != "$RUNID" ]; then
		say lease ok not-held
		return 0
	fi
	rm -f "$KDIR/lease" && durable "$KDIR" || return 1
	say lease ok released
}

# space_of DIR: "A of T KiB free" for the file system DIR is on.
space_of() {
	# shellcheck disable=SC2046 # the two numbers
	set -- $(df -Pk "$1" 2>/dev/null | awk 'NR == 2 { print $2, $4 }')
	if [ "$#" -eq 2 ]; then printf '%s of %s KiB free' "$2" "$1"; else printf 'free space unknown'; fi
}

# cleanup: what runs that are gone left on the host, removed (call it
# holding the lock: then no other kaudit script runs, and no apply script
# is halfway): the directory of a run that stopped before its manifest was
# on the disk (it changed nothing; its backups are of no use); the
# apply.owner an older kaudit's apply script left in a run's directory;
# each temporary file kaudit makes beside a file of FILES (records whose
# field 2 is the PATH).
cleanup() {
	_cl=
	set +f
	for _d in "$RUNS"/*; do
		[ -d "$_d" ] || continue
		if [ ! -e "$_d/manifest" ]; then
			rm -rf "$_d" && say cleaned ok "$_d"
			_cl=$_cl$NL$_d
		elif [ -e "$_d/apply.owner" ]; then
			rm -f "$_d/apply.owner" && say cleaned ok "$_d/apply.owner"
			_cl=$_cl$NL$_d/apply.owner
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
