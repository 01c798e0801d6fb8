M='KAUDIT_000000000000000000000001'
KDIR='/var/lib/kaudit'
RUNS='/var/lib/kaudit/runs'
RUNID='20260102T030405Z-1a2b3c4d'
OPERATOR='unknown'
KPID='0'
KPSTART='0'
TTL='300'
LOCKWAIT='10'
TAKEOVER='-'
RUN='/var/lib/kaudit/runs/20260102T030405Z-1a2b3c4d'
ETHTOOL='0'
FILES='0	/opt/kafka/config/server.properties	present	fe3209d6d4f51935b391288a43df48d9ddece1a992597ae53387ca16611a9179	-	0d9807e9257ed76ebe0619555b6f7ddb0a665b3be18bf29d32c7dbf9bc39c698	IyBpdCdzICRIT01FIGBpZGAgJChyZWJvb3QpCmE9MQpzb2NrZXQubGlzdGVuLmJhY2tsb2cuc2l6ZT00MDk2Cg==
1	/etc/sysctl.d/99-kaudit.conf	absent	-	0644	f36b9fc912c26c61c3e24dc759130032c68cf32cee22e5d4e3ade65ad4e56d43	bmV0LmNvcmUuc29tYXhjb25uID0gNDA5Ngo=
'
VALUES='sysctl-0	sysctl	net.core.somaxconn	sysctl	/proc/sys/net/core/somaxconn	-	-	128	4096
sysctl-1	sysctl	net.ipv4.tcp_rmem	sysctl	/proc/sys/net/ipv4/tcp_rmem	-	-	4096 131072 6291456	4096 87380 134217728
'
UNITS=''
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
# kaudit apply script: changes one host as a fix plans it. Its header
# (rendered by ApplyScript) sets:
#
#	M        the result marker
#	RUNID    the run's id
#	RUNS     where runs keep their backups (/var/lib/kaudit/runs)
#	RUN      this run's directory, RUNS/RUNID
#	ETHTOOL  1: find ethtool (NIC values are set), 0: not needed
#	KDIR LOCKWAIT OPERATOR KPID KPSTART TTL TAKEOVER: the host lock and the
#	         run's lease (lock_host in lib.sh)
#	FILES    one record per file to replace:
#	           I PATH STATE OLDSHA MODE NEWSHA CONTENT
#	         STATE present (OLDSHA: its SHA-256 when read, MODE -) or
#	         absent (OLDSHA -, MODE: the octal mode it is created with);
#	         NEWSHA the SHA-256 of the new content, CONTENT it in base64
#	         on one line ("-": empty)
#	VALUES   one record per running value to set:
#	           STEP KIND KEY HOW TARGET SETTING PROP BEFORE TO
#	         STEP sysctl-I or nic-I, KIND its manifest kind (sysctl,
#	         nic-ring, nic-offload), KEY its name in messages, HOW TARGET
#	         SETTING PROP how it is read and set (getv in lib.sh), BEFORE
#	         its value when read, TO the value to set (both folded)
#	UNITS    one record per systemd service whose drop-in is among FILES:
#	           UNIT
#	         its drop-in directory is created when missing, and systemd
#	         reloads its units once the files are written
#
# Records are lines of tab-separated fields, none empty. In order, it
# stops at the first failing step (fail), so nothing changes before every
# check passed and every backup is on the disk; what a failure leaves
# changed the caller restores (the rollback script). A failure before the
# first change removes RUN: a run that changed nothing leaves nothing.
#
#	tools                  the commands it needs are there
#	lease                  KDIR/lock held (for the whole script), the
#	                       lease is this run's (fails "lost [RUNID
#	                       OPERATOR STARTED EXPIRES]" when it is not)
#	check-file-I, check-STEP   nothing changed since the read script
#	space                  room for the backups on KDIR's file system
#	                       (fails "KDIR AVAIL TOTAL NEED", KiB)  ok: AVAIL NEED
#	rundir                 RUN created, apply.owner in it      ok: RUN
#	backup-file-I          a copy of each present file, RUN/file-I,
#	                       checked by SHA-256                  ok: the copy
#	backup-manifest        RUN/manifest (below)                ok: its path
#	backup-STEP            RUN/STEP: "KEY = BEFORE"
#	STEP                   the value set, read back            ok: the value
#	dropin-dir             each missing /etc/systemd/system/UNIT.d
#	                       created (with its parent synced)    ok: the dirs
#	file-I                 the file replaced through a temporary file in
#	                       its directory, checked, renamed     ok: SHA-256
#	daemon-reload          systemctl daemon-reload, when UNITS ok: -
#	done                   apply.owner removed                 ok: -
#
# Every file it writes, renames or removes is on the disk, with its
# directory, before the step's ok line (durable). Each sync is a process,
# so a phase syncs what it wrote at once (tosync, sync_all) and prints its
# ok lines after (later, flush): the backups and the manifest, then its
# rename; the temporary files; the renamed files and the manifest again,
# then its rename and the removal of apply.owner.
#
# RUN/manifest says what the run changed, so that the host alone can roll
# it back (kaudit's local journal is the primary record). Lines of
# tab-separated fields, written whole (RUN/manifest.new, synced, renamed)
# before the first change and again with what the files hold after it,
# so it is complete or not there at all:
#
#	kaudit-manifest  VERSION  RUNID          the first line (VERSION 2)
#	file  file-I  present  SHA  PATH         a file and its backup
#	file  -  absent  -  PATH                 a file the run creates
#	KIND  STEP  KEY  BEFORE  TO              a running value
#	written  I  SHA  -  -                    file I as the run left it
#	end  N                                   the last line: N records
#
# ApplyOwner (RUN/apply.owner) is "PID STARTTIME" of this shell while it
# runs (the rollback script waits for it to be gone).

MANIFEST_VERSION=2
OWNER=apply.owner
MF=
MFN=0
owner_left=
RUN_MADE=
CHANGING=

FINISHED=

# apply_exit: when a failing step ends the script (ON_EXIT, lib.sh):
# before the first change the run's directory is removed (nothing
# changed: nothing to keep); after it, apply.owner (this shell is gone).
apply_exit() {
	[ -z "$FINISHED" ] || return 0
	if [ -n "$RUN_MADE" ] && [ -z "$CHANGING" ]; then
		rm -rf "$RUN" && durable "$RUNS" >/dev/null 2>&1
	elif [ -n "$CHANGING" ]; then
		rm -f "$RUN/$OWNER" && durable "$RUN" >/dev/null 2>&1
	fi
}
# shellcheck disable=SC2034 # read by at_exit (lib.sh)
ON_EXIT=apply_exit

# space_check: fail step space unless the file system of KDIR has room
# for the backups, in whole blocks: each copy, each value's backup, the
# manifest twice (RUN/manifest.new beside RUN/manifest) and apply.owner.
space_check() {
	_bs=$(stat -f -c %S "$KDIR" 2>/dev/null) || _bs=4096
	case $_bs in '' | *[!0-9]* | 0) _bs=4096 ;; esac
	_need=$((3 * _bs))
	records "$FILES" 7 space_file
	records "$VALUES" 9 space_value
	# shellcheck disable=SC2046 # the two numbers
	set -- $(df -Pk "$KDIR" 2>/dev/null | awk 'NR == 2 { print $2, $4 }')
	_needk=$(((_need + 1023) / 1024))
	if [ "$#" -ne 2 ]; then
		say space ok "unknown$TAB$_needk"
		return 0
	fi
	[ "$2" -ge "$_needk" ] || fail space "$KDIR$TAB$2$TAB$1$TAB$_needk"
	say space ok "$2$TAB$_needk"
}

# space_file I PATH STATE ...: the blocks of PATH's copy.
space_file() {
	[ "$3" = present ] || return 0
	_sz=$(wc -c < "$2" | tr -d ' ') || _sz=0
	_need=$((_need + (_sz + _bs - 1) / _bs * _bs))
}

# space_value STEP ...: one block for its backup.
space_value() { _need=$((_need + _bs)); }

# mf_add FIELD...: one more manifest record.
mf_add() {
	_ml=$1
	shift
	for _mf in "$@"; do _ml=$_ml$TAB$_mf; done
	MF=$MF$_ml$NL
	MFN=$((MFN + 1))
}

# mf_stage: RUN/manifest.new from the records so far, between its first
# line and its end line, to be synced (tosync) and then renamed to
# RUN/manifest.
mf_stage() {
	{
		printf 'kaudit-manifest\t%s\t%s\n' "$MANIFEST_VERSION" "$RUNID"
		printf '%s' "$MF"
		printf 'end\t%s\n' "$MFN"
	} > "$RUN/manifest.new" && tosync "$RUN/manifest.new"
}

# The paths to make durable with one sync (each sync is a process: a
# script syncs a few times, not once per file), and the ok lines printed
# once they are on the disk.
SYNCS=
OKS=

# tosync PATH: PATH (and its directory) is synced by the next sync_all.
tosync() { SYNCS=$SYNCS$1$NL; }

# sync_all: durable for every path tosync was given since the last one.
sync_all() {
	IFS=$NL
	# shellcheck disable=SC2086 # one path a line, no globbing (set -f)
	set -- $SYNCS
	unset IFS
	SYNCS=
	[ "$#" -eq 0 ] || durable "$@"
}

# later STEP DETAIL: the ok line of STEP, printed by flush.
later() { OKS=$OKS$1$TAB$2$NL; }
say_ok() { say "$1" ok "$2"; }
flush() {
	_ok=$OKS
	OKS=
	records "$_ok" 2 say_ok
}

# make_rundir: RUN (which must not exist yet) and apply.owner, on the disk.
make_rundir() {
	mkdir -p "$RUNS" || fail rundir "cannot create $RUNS"
	mkdir "$RUN" || fail rundir "cannot create $RUN (a run with this id exists already?)"
	RUN_MADE=yes
	# Name this shell, so that a restore does not run while it still can
	# change the host.
	if _pst=$(pstart $$); then
		printf '%s %s\n' "$$" "$_pst" > "$RUN/$OWNER" || fail rundir "cannot write $RUN/$OWNER"
	fi
	set -- "$RUN" "$RUNS" "${RUNS%/*}"
	if [ -e "$RUN/$OWNER" ]; then set -- "$@" "$RUN/$OWNER"; fi
	durable "$@" || fail rundir "cannot sync $RUN"
	say rundir ok "$RUN"
}

# check_file I PATH STATE OLDSHA MODE NEWSHA CONTENT
check_file() {
	_st=check-file-$1 f=$2
	if [ "$3" = present ]; then
		{ [ -f "$f" ] && [ ! -L "$f" ] && [ "$(sha "$f")" = "$4" ]; } || fail "$_st" "$f changed since it was read: nothing changed, re-run"
	else
		{ [ ! -e "$f" ] && [ ! -L "$f" ]; } || fail "$_st" "$f appeared since it was read: nothing changed, re-run"
	fi
	say "$_st" ok -
}

# check_value STEP KIND KEY HOW TARGET SETTING PROP BEFORE TO
check_value() {
	getv "$4" "$5" "$6" "$7"
	[ -n "$v" ] || fail "check-$1" "cannot read $3"
	[ "$v" = "$8" ] || fail "check-$1" "$3 changed since it was read: nothing changed, re-run"
	say "check-$1" ok -
}

# backup_file I PATH STATE OLDSHA MODE NEWSHA CONTENT
backup_file() {
	_st=backup-file-$1 f=$2
	if [ "$3" != present ]; then
		mf_add file - absent - "$f"
		later "$_st" absent
		return
	fi
	bk=$RUN/file-$1
	cpa "$f" "$bk" || fail "$_st" "cannot copy $f to $bk"
	[ "$(sha "$bk")" = "$4" ] || fail "$_st" "backup $bk does not match $f"
	tosync "$bk"
	mf_add file "file-$1" present "$4" "$f"
	later "$_st" "$bk"
}

# manifest_value STEP KIND KEY HOW TARGET SETTING PROP BEFORE TO
manifest_value() { mf_add "$2" "$1" "$3" "$8" "$9"; }

# backup_value STEP KIND KEY HOW TARGET SETTING PROP BEFORE TO
backup_value() {
	printf '%s = %s\n' "$3" "$8" > "$RUN/$1" || fail "backup-$1" "cannot write $RUN/$1"
	tosync "$RUN/$1"
	later "backup-$1" -
}

# set_value STEP KIND KEY HOW TARGET SETTING PROP BEFORE TO
set_value() {
	setv "$4" "$5" "$6" "$7" "$9" || fail "$1" "cannot set $3"
	getv "$4" "$5" "$6" "$7"
	[ "$v" = "$9" ] || fail "$1" "$3 reads back $v"
	say "$1" ok "$v"
}

# tmp_of PATH: t = the temporary file that replaces PATH.
tmp_of() { _d=${1%/*}; t=${_d}/.${1##*/}.kaudit-$RUNID; }

# stage_file I PATH STATE OLDSHA MODE NEWSHA CONTENT: the temporary file,
# checked, to be synced and renamed over PATH (rename_file).
stage_file() {
	_st=file-$1 f=$2
	tmp_of "$f"
	rm -f "$t" || fail "$_st" "cannot remove $t"
	if [ "$3" = present ]; then
		# A copy first: the new file keeps the old one's mode, owner and
		# xattrs (SELinux context); writing into it keeps them.
		cpa "$f" "$t" || { rm -f "$t"; fail "$_st" "cannot create $t"; }
	else
		( set -C; : > "$t" ) || { rm -f "$t"; fail "$_st" "cannot create $t"; }
		chmod "$5" "$t" || { rm -f "$t"; fail "$_st" "cannot chmod $t"; }
	fi
	if [ "$7" = - ]; then
		: > "$t" || { rm -f "$t"; fail "$_st" "cannot write $t"; }
	else
		base64 -d > "$t" <<-EOF || { rm -f "$t"; fail "$_st" "cannot write $t"; }
			$7
		EOF
	fi
	[ "$(sha "$t")" = "$6" ] || { rm -f "$t"; fail "$_st" "$t does not hold what was sent"; }
	tosync "$t"
}

# unstage_file I PATH ...: the temporary file removed.
unstage_file() { tmp_of "$2"; rm -f "$t"; }

# rename_file I PATH STATE OLDSHA MODE NEWSHA CONTENT
rename_file() {
	_st=file-$1 f=$2
	tmp_of "$f"
	mv -f "$t" "$f" || { rm -f "$t"; fail "$_st" "cannot rename $t to $f"; }
	tosync "$f"
	# The hash after writing, read back, in the manifest too: a rollback
	# leaves the file alone once it no longer has it.
	w=$(sha "$f") || fail "$_st" "cannot read $f back"
	mf_add written "$1" "$w" - -
	later "$_st" "$w"
}

# make_dropin_dir UNIT: its drop-in directory, created when missing.
make_dropin_dir() {
	_d=/etc/systemd/system/$1.d
	[ -d "$_d" ] && return 0
	mkdir "$_d" || fail dropin-dir "cannot create $_d"
	durable /etc/systemd/system || fail dropin-dir "cannot sync /etc/systemd/system"
	made="$made $_d"
}

tools sha256sum base64 cp mv rm mkdir chmod cat tr sync df awk
[ -z "$UNITS" ] || tools systemctl
if [ "$ETHTOOL" = 1 ]; then ethtool_path; fi
lock_host || lock_busy
lease_mine lease
say lease ok -
# 1. nothing changed since the read script, and room for the backups
records "$FILES" 7 check_file
records "$VALUES" 9 check_value
space_check
make_rundir
# 2. backups, on the disk before anything changes
records "$FILES" 7 backup_file
records "$VALUES" 9 manifest_value
records "$VALUES" 9 backup_value
mf_stage || fail backup-manifest "cannot write $RUN/manifest.new"
sync_all || fail backup-manifest "cannot sync the backups in $RUN"
mv -f "$RUN/manifest.new" "$RUN/manifest" || fail backup-manifest "cannot rename $RUN/manifest.new"
durable "$RUN/manifest" || fail backup-manifest "cannot sync $RUN/manifest"
flush
say backup-manifest ok "$RUN/manifest"
# 3. running values
CHANGING=yes
records "$VALUES" 9 set_value
# 4. files: temporary files in the same directories, checked, synced,
# renamed; the renames synced with the manifest of what was written, then
# its rename and the removal of apply.owner.
made=''
records "$UNITS" 1 make_dropin_dir
[ -z "$UNITS" ] || say dropin-dir ok "${made:- -}"
records "$FILES" 7 stage_file
if [ -n "$FILES" ]; then
	sync_all || { records "$FILES" 7 unstage_file; fail file-0 "cannot sync the new files"; }
	records "$FILES" 7 rename_file
	mf_stage || fail file-0 "cannot write $RUN/manifest.new"
	sync_all || fail file-0 "cannot sync the new files and $RUN/manifest.new"
	mv -f "$RUN/manifest.new" "$RUN/manifest" || fail file-0 "cannot rename $RUN/manifest.new"
fi
if [ -n "$UNITS" ]; then
	systemctl daemon-reload || fail daemon-reload "systemctl daemon-reload failed"
	say daemon-reload ok -
fi
rm -f "$RUN/$OWNER" || owner_left=yes
durable "$RUN/manifest" || fail file-0 "cannot sync $RUN/manifest"
flush
[ -z "${owner_left:-}" ] || fail "done" "cannot remove $RUN/$OWNER"
FINISHED=yes
say "done" ok -
