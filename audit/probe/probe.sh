# kaudit probe wrapper (POSIX sh, read from stdin): checks what it needs,
# then runs the python probe from the PY variable with a hard time limit.
# Writes nothing to disk. Variables above: M REL BUDGET_MS KILL_S PAYLOAD
# RCVBUFS PYTHONS PY.
kv() { printf '%s=%s\n' "$1" "$2"; }
run_probe() {
	uid=$(id -u 2>/dev/null)
	if [ "$uid" != 0 ]; then
		kv state needs-root
		kv reason "running as uid ${uid:-?} without become: sudo; the probe needs root to create a network namespace"
		return
	fi
	r=$(cat /proc/sys/kernel/osrelease 2>/dev/null)
	kv release "$r"
	kv arch "$(uname -m 2>/dev/null)"
	if [ "$r" != "$REL" ]; then
		kv state error
		kv reason "kernel release is now $r, not the gathered $REL (rebooted?): the per-namespace decision does not hold, probe not run"
		return
	fi
	py=''
	for c in $PYTHONS; do
		if command -v "$c" >/dev/null 2>&1; then py=$(command -v "$c"); break; fi
	done
	if [ -z "$py" ]; then
		kv state no-python
		kv reason "none of $PYTHONS found"
		return
	fi
	if [ ! -r /proc/sys/net/ipv4/tcp_syncookies ]; then
		kv state unsupported
		kv reason "/proc/sys/net/ipv4/tcp_syncookies not readable (kernel without SYN cookies?)"
		return
	fi
	if [ ! -w /proc/sys/net/ipv4/tcp_syncookies ]; then
		kv state unsupported
		kv reason "/proc/sys/net/ipv4/tcp_syncookies not writable (read-only /proc/sys, a container?): the probe could not guard it"
		return
	fi
	if [ ! -r /proc/sys/net/core/rmem_max ]; then
		kv state unsupported
		kv reason "/proc/sys/net/core/rmem_max not readable: the probe cannot tell the SO_RCVBUF clamp"
		return
	fi
	t=''
	if command -v timeout >/dev/null 2>&1; then t="timeout -s KILL $KILL_S"; fi
	# The namespace: unshare(1) (util-linux) needs no python module (Debian's
	# python3-minimal has no ctypes); fd 3 is the HOST namespace's
	# tcp_syncookies, opened before, for the probe's guard; fd 4 its
	# net.core.rmem_max (a new namespace of a 6.1 kernel has none). Without
	# unshare(1), python makes the namespace itself ("self").
	nsh=''
	if command -v unshare >/dev/null 2>&1; then
		nsh=$(readlink /proc/self/ns/net 2>/dev/null)
		case "$nsh" in
		net:\[[0-9]*\]) ;;
		*) nsh='' ;;
		esac
	fi
	if [ -n "$nsh" ]; then
		if ! msg=$(unshare -n true 2>&1); then
			kv state unshare-failed
			kv reason "unshare -n: $(printf '%s' "$msg" | tr '\n' ' ')"
			return
		fi
		# shellcheck disable=SC2086 # RCVBUFS and t are word lists on purpose
		$t unshare -n "$py" -E -s -c "$PY" "$BUDGET_MS" "$PAYLOAD" "$nsh" $RCVBUFS 3<>/proc/sys/net/ipv4/tcp_syncookies 4</proc/sys/net/core/rmem_max
	else
		# shellcheck disable=SC2086
		$t "$py" -E -s -c "$PY" "$BUDGET_MS" "$PAYLOAD" self $RCVBUFS
	fi
	kv exit "$?"
	kv host_syncookies_after "$(cat /proc/sys/net/ipv4/tcp_syncookies 2>/dev/null)"
}
printf '%s begin probe\n' "$M"
run_probe 2>&1
printf '\n%s end probe ok\n' "$M"
printf '%s done\n' "$M"
