# sockets.awk: the gather's one pass over one ss run.
#
# mode=client: input `ss -tin state established '( dport = :P … )'`;
# prints the conns body: the header, at most -v lim sockets (each socket
# line as ss printed it, its info line cut to the wscale:SND,RCV token, or
# "-" when ss printed none: window scaling not in use), then "total=N",
# the number of sockets before the bound.
#
# mode=broker: input `ss -tinp state listening state established` (-tin
# when no process is a broker candidate: no users:((…)); any
# iproute2: a header or none, a Netid column or none); -v M (the section
# marker), kport (the inventory's Kafka port), kpids (the pids whose
# command line is a Kafka broker's, in /proc order), lim. Prints three
# sections:
#   listeners    the header and the LISTEN rows, as ss printed them;
#   established  "ADDRESS:PORT COUNT" per local address:port of every
#                listening port (what would reconnect after a restart);
#   conns        as in client mode, for the sockets whose local port is
#                the Kafka port or one the broker's pid listens on;
# and writes "PID FOUND" to /dev/fd/3: the broker is the pid listening on
# kport when its command line is a broker's (FOUND=listener), else the
# first of kpids (FOUND=cmdline); nothing when there is none.
# Memory is bounded by the distinct local address:ports and lim sockets
# per local port: a broker with 100,000 connections prints a few lines.
BEGIN {
	nk = split(kpids, kp, " ")
	for (i = 1; i <= nk; i++) cand[kp[i]] = 1
}
/^!/ { if (mode == "client") print; else errs = errs $0 "\n"; next }
$1 == "Recv-Q" || $1 == "State" || $1 == "Netid" {
	if (hdr == "") hdr = $0
	if (mode == "client" && !hdrout) { print; hdrout = 1 }
	last = ""
	next
}
/^[ \t]/ {
	if (last == "") next
	w = "-"
	if (match($0, /wscale:[0-9]+,[0-9]+/)) w = substr($0, RSTART, RLENGTH)
	if (mode == "client") print "\t " w
	else info[n] = "\t " w
	last = ""
	next
}
NF == 0 { next }
mode == "client" {
	total++
	last = ""
	if (total <= lim) { print; last = "c" }
	next
}
{
	i = 1
	if ($1 == "tcp") i++
	st = ""
	if ($i !~ /^[0-9]+$/) { st = $i; i++ }
	a = $(i + 2)
	p = a; sub(/.*:/, "", p)
	last = ""
	if (st == "LISTEN") { listener(a, p); next }
	if (st != "" && st != "ESTAB") next
	est[a]++
	cnt[p]++
	if (cnt[p] > lim) next
	n++
	row[n] = conn($0, st)
	port[n] = p
	last = "e"
}
# listener keeps a LISTEN row, its port and the pids of its users.
function listener(a, p,    s, q) {
	nl++
	lrow[nl] = $0
	listening[p] = 1
	lport[nl] = p
	s = $0
	lpids[nl] = " "
	while (match(s, /pid=[0-9]+/)) {
		q = substr(s, RSTART + 4, RLENGTH - 4)
		lpids[nl] = lpids[nl] q " "
		s = substr(s, RSTART + RLENGTH)
	}
	if (p == kport && kpid == "" && q != "") kpid = q # the first such row with a user
}
# conn is an ESTAB row as `ss -tin state established` prints it: without
# the Netid and State columns and the users:((…)) of -p.
function conn(s, st,    k) {
	if (st != "") { s = substr(s, index(s, st) + length(st)); sub(/^[ \t]+/, "", s) }
	if ((k = index(s, " users:((")) > 0) s = substr(s, 1, k - 1)
	return s
}
END {
	if (mode == "client") { print "total=" total + 0; exit }
	pid = ""
	if (kpid != "" && (kpid in cand)) { pid = kpid; found = "listener" }
	else if (nk > 0) { pid = kp[1]; found = "cmdline" }
	if (pid != "") print pid " " found > "/dev/fd/3"
	sel[kport] = 1
	printf "%s begin listeners\n%s", M, errs
	if (hdr != "") print hdr
	for (j = 1; j <= nl; j++) {
		print lrow[j]
		if (pid != "" && index(lpids[j], " " pid " ")) sel[lport[j]] = 1
	}
	printf "\n%s end listeners ok\n%s begin established\n%s", M, M, errs
	for (a in est) { p = a; sub(/.*:/, "", p); if (p in listening) print a " " est[a] }
	printf "\n%s end established ok\n", M
	printf "%s begin conns\n%s", M, errs
	if (hdr != "") print hdr
	shown = 0
	for (j = 1; j <= n; j++) {
		if (!(port[j] in sel)) continue
		if (++shown > lim) break
		print row[j]
		if (j in info) print info[j]
	}
	total = 0
	for (p in sel) total += cnt[p]
	printf "total=%d\n\n%s end conns ok\n", total, M
}
