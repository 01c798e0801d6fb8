# kaudit read script: reads what a fix will change on a host, changes
# nothing. Its header (rendered by ReadScript) sets:
#
#	M        the result marker
#	LEASE    1: take the host lock and the run's lease first (the read
#	         step of a change: hold in lib.sh, with its variables, and
#	         RUNS), 0: only read (a verify)
#	ETHTOOL  1: find ethtool (NIC values are read), 0: not needed
#	FILES    one record per file:            I PATH
#	VALUES   one record per running value:   STEP KEY HOW TARGET SETTING PROP
#
# Records are lines of tab-separated fields, none empty ("-": none); see
# getv in lib.sh for HOW TARGET SETTING PROP. Steps and their ok detail:
#
#	lease    STARTED EXPIRES: the run's lease (fails "held LEASE" while
#	         another run holds it; LEASE: the lease's six fields)
#	stale    the expired lease it replaced: "taken LEASE", or malformed
#	cleaned  PATH: one per leftover of a run that is gone (cleanup)
#	file-I   absent | present SHA256 MODE:OWNER:GROUP BASE64
#	         (a symbolic link or anything but a regular file fails)
#	STEP     the value (sysctl-I: unfolded; nic-I), e.g. "4096"
#	ethtool  its path on the host (when ETHTOOL is 1)
#	done     -

tools sha256sum base64 tr cat
if [ "$LEASE" = 1 ]; then
	hold read take
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
