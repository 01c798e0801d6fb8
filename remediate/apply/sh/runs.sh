# kaudit runs script: lists the runs a host holds, changes nothing. Its
# header (rendered by RunsScript) sets M, KDIR and RUNS. Steps and their
# ok detail:
#
#	lease     "found LEASE NOW": the lease (lease_get in lib.sh: the run
#	          changing the host), NOW the host's clock; malformed when it
#	          cannot be read
#	run       STATE RUNID: one per run directory; STATE manifest (whole:
#	          its end line is there), partial (no end line), none
#	applying  RUNID: the lease's run, whose apply script holds the host
#	          lock now (lock_holder in lib.sh)
#	done      -

lease_get
# shellcheck disable=SC2154 # lid: set by lease_get (lib.sh)
case $lid in
'') ;;
'?') say lease ok malformed ;;
*) say lease ok "found$TAB$LEASE$TAB$(date +%s)" ;;
esac
set +f
for d in "$RUNS"/*; do
	[ -d "$d" ] || continue
	st=none
	if [ -f "$d/manifest" ]; then
		st=partial
		last=
		while IFS= read -r x || [ -n "$x" ]; do last=$x; done < "$d/manifest"
		case $last in "end$TAB"*) st=manifest ;; esac
	fi
	say run ok "$st$TAB${d##*/}"
done
set -f
# shellcheck disable=SC2154 # hscr: set by lock_holder (lib.sh)
if [ -n "$lid" ] && [ "$lid" != '?' ] && lock_holder && [ "$hscr" = apply ]; then say applying ok "$lid"; fi
say "done" ok -
