# kaudit apply script: changes one host as a fix plans it. Its header
# (rendered by ApplyScript) sets:
#
#	M        the result marker
#	RUNID    the run's id
#	RUNS     where runs keep their backups (/var/lib/kaudit/runs)
#	RUN      this run's directory, RUNS/RUNID
#	ETHTOOL  1: find ethtool (NIC values are set), 0: not needed
#	KDIR LOCKWAIT OPERATOR KPID KPSTART TTL TAKEOVER: the host lock and the
#	         run's lease (hold in lib.sh)
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
#	                       lease is this run's (fails "lost [LEASE]"
#	                       when it is not: hold in lib.sh)
#	check-file-I, check-STEP   nothing changed since the read script
#	space                  room for the backups on KDIR's file system
#	                       (fails "KDIR AVAIL TOTAL NEED", KiB)  ok: AVAIL NEED
#	rundir                 RUN created                         ok: RUN
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
#	done                   -                                   ok: -
#
# Every file it writes, renames or removes is on the disk, with its
# directory, before the step's ok line (durable). Each sync is a process,
# so a phase syncs what it wrote at once (tosync, sync_all) and prints its
# ok lines after (later, flush): the backups and the manifest, then its
# rename; the temporary files; the renamed files and the manifest again,
# then its rename.
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
# While it runs, the host lock's holder record names this shell (hold in
# lib.sh): a restore of this run waits for it to be gone.

MANIFEST_VERSION=2
MF=
MFN=0
RUN_MADE=
CHANGING=

FINISHED=

# apply_exit: when a failing step ends the script (ON_EXIT, lib.sh)
# before the first change, the run's directory is removed (nothing
# changed: nothing to keep).
apply_exit() {
	if [ -z "$FINISHED" ] && [ -n "$RUN_MADE" ] && [ -z "$CHANGING" ]; then
		rm -rf "$RUN" && durable "$RUNS" >/dev/null 2>&1
	fi
}
# shellcheck disable=SC2034 # read by at_exit (lib.sh)
ON_EXIT=apply_exit

# space_check: fail step space unless the file system of KDIR has room
# for the backups, in whole blocks: each copy, each value's backup, the
# manifest twice (RUN/manifest.new beside RUN/manifest) and a spare.
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

# make_rundir: RUN (which must not exist yet), on the disk.
make_rundir() {
	mkdir -p "$RUNS" || fail rundir "cannot create $RUNS"
	mkdir "$RUN" || fail rundir "cannot create $RUN (a run with this id exists already?)"
	RUN_MADE=yes
	durable "$RUN" "$RUNS" "${RUNS%/*}" || fail rundir "cannot sync $RUN"
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
hold apply mine
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
# its rename.
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
durable "$RUN/manifest" || fail file-0 "cannot sync $RUN/manifest"
flush
FINISHED=yes
say "done" ok -
