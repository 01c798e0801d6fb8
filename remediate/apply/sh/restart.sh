# kaudit restart script: restarts the broker's systemd unit (fix --apply
# --restart, rollback --restart) and waits for the new process, or, with
# MODE=counters, only reads the counters (the watch). Its header (rendered
# by RestartScript) sets M, MODE, UNIT (a service name), PORT (the Kafka
# port), WAIT (seconds, --restart-timeout) and, for MODE=restart, the host
# lock's and lease's variables (hold in lib.sh). Steps and their ok
# detail:
#
#	counters  "SyncookiesSent TCPReqQFullDoCookies ListenOverflows
#	          ListenDrops" from /proc/net/netstat (TcpExt), "-" for one the
#	          kernel does not have
#	lease     free; fails "held LEASE" when another run's lease is live
#	          (nothing restarted)
#	oldpid    the unit's MainPID before the restart (0: not running)
#	restart   - (systemctl accepted the restart job)
#	stopped   seconds until the old process was gone
#	newpid    the unit's new MainPID
#	listen    the Send-Q of the new process's listener on PORT (its
#	          effective backlog), once it listens
#	nofile    "SOFT HARD" Max open files of the new process (/proc/PID/limits)
#	done      -

counters() {
	awk '$1 == "TcpExt:" {
		if (!seen) { for (i = 2; i <= NF; i++) name[i] = $i; seen = 1; next }
		for (i = 2; i <= NF; i++) v[name[i]] = $i
	}
	function c(k) { return (k in v) ? v[k] : "-" }
	END { print c("SyncookiesSent"), c("TCPReqQFullDoCookies"), c("ListenOverflows"), c("ListenDrops") }' /proc/net/netstat
}

# mainpid: the unit's MainPID (0 when it has none).
mainpid() {
	_mp=$(systemctl show -p MainPID "$UNIT" 2>/dev/null) || return 1
	_mp=${_mp#MainPID=}
	case $_mp in '' | *[!0-9]*) return 1 ;; esac
	printf '%s\n' "$_mp"
}

# sendq PID: the Send-Q of PID's listener on PORT ("" when none).
sendq() {
	ss -ltnp 2>/dev/null | awk -v port=":$PORT" -v pid="pid=$1," '
		index($0, pid) && substr($4, length($4) - length(port) + 1) == port { print $3; exit }'
}

c=$(counters) || fail counters "cannot read /proc/net/netstat"
say counters ok "$c"
[ "$MODE" = counters ] && { say "done" ok -; exit 0; }

# Another run's live lease: that run is changing the host between its
# scripts (the lock is held only for each one), and a restart now would
# put its half-made change in force. A rollback holds no lease of its own.
hold restart free
command -v systemctl >/dev/null 2>&1 || fail restart "no systemctl on this host: restart $UNIT by hand"
old=$(mainpid) || fail oldpid "cannot read the MainPID of $UNIT (systemctl show)"
say oldpid ok "$old"
ost=
[ "$old" -gt 0 ] && ost=$(pstart "$old")
out=$(systemctl --no-block restart "$UNIT" 2>&1) || fail restart "systemctl restart $UNIT: $out"
say restart ok -
n=0
while [ "$old" -gt 0 ] && [ -n "$ost" ] && [ "$(pstart "$old")" = "$ost" ]; do
	[ "$n" -lt "$WAIT" ] || fail stopped "the old process $old of $UNIT still runs after ${WAIT}s (a controlled shutdown can take minutes: raise --restart-timeout, or look at the broker's log)"
	sleep 1
	n=$((n + 1))
done
say stopped ok "$n"
new=0 q=
while :; do
	new=$(mainpid) || new=0
	if [ "$new" -gt 0 ] && [ "$new" != "$old" ]; then
		q=$(sendq "$new")
		[ -n "$q" ] && break
	fi
	[ "$n" -lt "$WAIT" ] || fail listen "$UNIT: no new process listening on port $PORT after ${WAIT}s (MainPID $new): look at systemctl status $UNIT and the broker's log"
	sleep 1
	n=$((n + 1))
done
say newpid ok "$new"
say listen ok "$q"
l=$(awk '/^Max open files/ { print $4, $5 }' /proc/"$new"/limits 2>/dev/null) || l=
say nofile ok "${l:--}"
say "done" ok -
