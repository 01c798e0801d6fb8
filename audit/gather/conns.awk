# conns.awk: bound and shrink `ss -tin state established '( sport = :P )'`
# output for kaudit: at most -v lim sockets, each socket line as ss printed
# it and its info line cut to the wscale:SND,RCV token (or "-" when ss
# printed none: window scaling not in use). The header is kept; the last
# line is "total=N", the number of sockets before the bound.
/^!/ { print; next }
$1 == "Recv-Q" || $1 == "State" || $1 == "Netid" { if (!hdr) print; hdr = 1; next }
/^[ \t]/ {
	if (shown > lim) next
	w = "-"
	if (match($0, /wscale:[0-9]+,[0-9]+/)) w = substr($0, RSTART, RLENGTH)
	print "\t " w
	next
}
NF > 0 { total++; shown = total; if (total <= lim) print }
END { print "total=" total + 0 }
