# kaudit release script: the last step of a run on a host, once it is
# verified, restored or left unchanged. Its header (rendered by
# ReleaseScript) sets M, RUNS and the host lock's and lease's variables
# (lock_host in lib.sh). Steps and their ok detail:
#
#	lease    released (KDIR/lease was this run's and is removed), or
#	         "not held" (another run's, or none)
#	cleaned  PATH: the run's apply.owner when its shell is gone
#	done     -

lock_host || lock_busy
lease_get
# shellcheck disable=SC2154 # lid: set by lease_get (lib.sh)
if [ "$lid" = "$RUNID" ]; then
	lease_release || fail lease "cannot remove $KDIR/lease"
	say lease ok released
else
	say lease ok "not held"
fi
o=$RUNS/$RUNID/apply.owner
if [ -f "$o" ]; then
	op='' ost=''
	read -r op ost < "$o" 2>/dev/null || :
	case $op in
	'' | *[!0-9]*) rm -f "$o" && durable "${o%/*}" && say cleaned ok "$o" ;;
	*) if [ "$(pstart "$op")" != "$ost" ]; then rm -f "$o" && durable "${o%/*}" && say cleaned ok "$o"; fi ;;
	esac
fi
say "done" ok -
