# established.awk: count ESTABLISHED TCP connections per local address:port,
# for the listening ports only (-v ports="9092 9093 ..."), from the output of
# `ss -tn state established` (any iproute2: a header or none, a State
# column or none). One pass, memory bounded by the listeners' addresses:
# a broker with 100,000 connections prints a few lines, not 100,000.
# Output: "ADDRESS:PORT COUNT" lines, the address as ss printed it.
BEGIN { n = split(ports, p, " "); for (i = 1; i <= n; i++) want[p[i]] = 1 }
/^!/ { print; next }
$1 == "Recv-Q" || $1 == "State" || $1 == "Netid" { next }
{
	i = ($1 ~ /^[0-9]+$/) ? 3 : 4
	if ($1 == "tcp") i++
	a = $i
	k = a; sub(/.*:/, "", k)
	if (k in want) c[a]++
}
END { for (a in c) print a " " c[a] }
