# kaudit rollback script: restores one host from a run's backups. Its
# header (rendered by RollbackScript) sets:
#
#	M        the result marker
#	RUNID    the run's id
#	RUN      the run's directory on the host (RUNS/RUNID)
#	FORCE    1: restore what changed since the run too, 0: keep it
#	ETHTOOL  1: find ethtool (NIC values are restored), 0: not needed
#	RELEASE  1: remove the run's lease at the end (kaudit rollback), 0:
#	         the run's own restore (its last step releases it)
#	KDIR LOCKWAIT OPERATOR KPID KPSTART TTL TAKEOVER: the host lock and the
#	         run's lease (hold in lib.sh); LOCKWAIT is also how long it
#	         waits for the run's apply script to end (it holds the lock)
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
#	lease           free: KDIR/lock held (for the whole script); fails "held
#	                LEASE" while another run's lease is live (that run is
#	                changing the host); with RELEASE, a second one at the
#	                end: released or not-held
#	apply-running   fails, restoring nothing, when the run's own apply
#	                script still holds the lock after LOCKWAIT seconds
#	                (lock_busy)
#	manifest        absent: the run changed nothing on this host (its
#	                manifest is on the disk before its first change), so
#	                nothing is restored and its directory is removed;
#	                else present
#	STEP            unchanged (already as before the run), restored (from
#	                its checked copy), removed (the run created it), or
#	                "kept CURRENT" (changed since the run, FORCE 0; CURRENT
#	                a hash, gone, or the value)
#	cleaned         PATH: what the run left (its temporary files; the
#	                apply.owner an older kaudit's apply script left)
#	dropin-dir      "removed DIR": the drop-in directory of a systemd
#	                drop-in the run created, when it is left empty
#	daemon-reload   systemd reloaded after a drop-in was restored
#	done            ok or failed
#
# What it writes, renames or removes is on the disk, with its directory,
# before the step's ok line (durable); so is a file found unchanged.

EMPTY_SHA=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
rc=ok

# soft STEP DETAIL: a failed step; the script goes on.
soft() { say "$1" fail "$2"; rc=failed; }

# clean_tmp STEP PATH ...: the run's temporary files beside PATH removed.
clean_tmp() {
	_d=${2%/*}
	_d=${_d:-/}
	for _t in "$_d/.${2##*/}.kaudit-$RUNID" "$_d/.${2##*/}.kaudit-restore-$RUNID"; do
		if [ -e "$_t" ] && rm -f "$_t" && durable "$_d"; then say cleaned ok "$_t"; fi
	done
}

# finish: the lease released (RELEASE), then the last line.
finish() {
	if [ "$RELEASE" = 1 ]; then lease_release || soft lock "cannot remove $KDIR/lease"; fi
	say "done" ok "$rc"
}

# edited PATH WRITTEN: PATH no longer is what the run wrote (it is kept,
# unless FORCE).
edited() {
	[ "$FORCE" = 0 ] && [ "$2" != - ] && ! { [ -f "$1" ] && [ ! -L "$1" ] && [ "$(sha "$1")" = "$2" ]; }
}

# kept STEP PATH
kept() { say "$1" ok "kept$TAB$(sha "$2" 2>/dev/null || echo gone)"; }

# restore_file STEP PATH STATE WANT STORED WRITTEN
restore_file() {
	st=$1 f=$2 want=$4 bk=$5
	_d=${f%/*}
	_d=${_d:-/}
	if [ "$3" = absent ]; then
		if [ ! -d "$_d" ]; then say "$st" ok unchanged # its directory never came
		elif [ ! -e "$f" ] && [ ! -L "$f" ]; then
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
	elif [ "$FORCE" = 0 ] && [ "$v" != "$8" ]; then say "$1" ok "kept$TAB${v:--}"
	elif ! setv "$3" "$4" "$5" "$6" "$7"; then soft "$1" "cannot set $2"
	else
		getv "$3" "$4" "$5" "$6"
		if [ "$v" = "$7" ]; then say "$1" ok restored; else soft "$1" "$2 reads back $v after restoring"; fi
	fi
}

# unit_file STEP PATH STATE WANT STORED WRITTEN: a systemd drop-in the
# run wrote makes systemd reload its units at the end; the drop-in
# directory of one it created goes too when nothing else is in it.
unit_file() {
	case "$2" in /etc/systemd/system/*.service.d/*) ;; *) return 0 ;; esac
	reload=yes
	_d=${2%/*}
	if [ "$3" = absent ] && [ -d "$_d" ] && rmdir "$_d" 2>/dev/null; then
		if durable /etc/systemd/system; then say dropin-dir ok "removed $_d"; else soft dropin-dir "$_d removed, but cannot sync /etc/systemd/system"; fi
	fi
}

tools sha256sum cp mv rm cat tr sync
hold rollback free
# An older kaudit's apply script named itself there; under the lock it is
# gone.
if [ -f "$RUN/apply.owner" ] && rm -f "$RUN/apply.owner" && durable "$RUN"; then say cleaned ok "$RUN/apply.owner"; fi
if [ ! -e "$RUN/manifest" ] && [ ! -L "$RUN/manifest" ]; then
	if [ -d "$RUN" ]; then rm -rf "$RUN" && durable "$RUNS" && say cleaned ok "$RUN"; fi
	say manifest ok absent
	finish
	exit 0
fi
say manifest ok present
records "$FILES" 6 restore_file
if [ -n "$VALUES" ] && [ "$ETHTOOL" = 1 ]; then ethtool_path; fi
records "$VALUES" 8 restore_value
records "$FILES" 6 clean_tmp
reload=''
records "$FILES" 6 unit_file
if [ -n "$reload" ] && [ -d /run/systemd/system ]; then
	if systemctl daemon-reload; then say daemon-reload ok -; else soft daemon-reload "systemctl daemon-reload failed: run it by hand"; fi
fi
finish
