# kaudit runs script: lists the runs a host holds, changes nothing. Its
# header (rendered by RunsScript) sets M, KDIR and RUNS. Steps and their
# ok detail:
#
#	lease  RUNID OPERATOR STARTED EXPIRES NOW: the lease (the run changing
#	       the host; times in seconds since the epoch, the host's clock),
#	       "malformed" when it cannot be read
#	run    RUNID STATE ACTIVE: one per run directory; STATE manifest (whole:
#	       its end line is there), partial (no end line), none; ACTIVE
#	       running (its apply.owner names a live shell), or -
#	done   -

if [ -f "$KDIR/lease" ]; then
	l=
	IFS= read -r l < "$KDIR/lease" || :
	IFS=$TAB
	# shellcheck disable=SC2086 # split on tabs, no globbing (set -f)
	set -- $l
	unset IFS
	if [ "$#" -eq 6 ]; then say lease ok "$1$TAB$2$TAB$5$TAB$6$TAB$(date +%s)"; else say lease ok malformed; fi
fi
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
	act=-
	if [ -f "$d/apply.owner" ] && read -r op ost < "$d/apply.owner" && [ -n "$ost" ] && [ "$(pstart "$op")" = "$ost" ]; then act=running; fi
	say run ok "${d##*/}$TAB$st$TAB$act"
done
set -f
say "done" ok -
