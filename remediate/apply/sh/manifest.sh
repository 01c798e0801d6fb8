# kaudit manifest script: prints a run's manifest (RUN/manifest, written
# by the apply script; its format is at the top of apply.sh) and, so that
# kaudit can say what is on the host when the manifest cannot be trusted,
# what the run's directory holds and which of kaudit's own files the host
# has. Changes nothing. Its header (rendered by ManifestScript) sets:
#
#	M       the result marker
#	RUN     the run's directory on the host
#	OWNED   one record per file kaudit owns (its header names the last
#	        run that wrote it):  PATH
#	LINKS   the prefix of kaudit's .link files (PREFIX*.link)
#
# Steps and their ok detail:
#
#	manifest   absent (no RUN/manifest), or present BYTES after its lines;
#	           fails (the script goes on) when it cannot be read
#	line       one per line of the manifest, its fields (a last line
#	           without a newline too: a truncated manifest)
#	stored     NAME BYTES: each file in RUN (absent RUN: none)
#	owned      PATH RUNID: each of kaudit's own files the host has, and
#	           the run its "# Last run:" line names ("-": none)
#	done       -

# owned PATH
owned() {
	[ -f "$1" ] || return 0
	_r=-
	while IFS= read -r _l || [ -n "$_l" ]; do
		case $_l in
		'# Last run: '*) _r=${_l#'# Last run: '}; break ;;
		esac
	done < "$1"
	case $_r in *[!A-Za-z0-9_-]*|'') _r='?' ;; esac
	say owned ok "$1$TAB$_r"
}

if [ ! -e "$RUN/manifest" ]; then
	say manifest ok absent
elif ! [ -f "$RUN/manifest" ] || ! [ -r "$RUN/manifest" ]; then
	say manifest fail "$RUN/manifest is not a readable file"
elif ! while IFS= read -r l || [ -n "$l" ]; do
	printf '%s\tline\tok\t%s\n' "$M" "$l"
done < "$RUN/manifest"; then
	say manifest fail "cannot read $RUN/manifest"
else
	say manifest ok "present$TAB$(wc -c < "$RUN/manifest" | tr -d ' ')"
fi
if [ -d "$RUN" ]; then
	set +f
	for p in "$RUN"/*; do
		[ -f "$p" ] && say stored ok "${p##*/}$TAB$(wc -c < "$p" | tr -d ' ')"
	done
	set -f
fi
records "$OWNED" 1 owned
set +f
for p in "$LINKS"*.link; do
	[ -f "$p" ] && owned "$p"
done
set -f
say "done" ok -
