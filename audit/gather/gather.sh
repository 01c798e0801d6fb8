# kaudit gather script: read-only, POSIX sh (dash, busybox sh), one run per
# host. It needs no bash, no sysctl binary and no root to read; a missing
# tool or a permission denied is reported in its section, never fatal.
# Output: sections between "$M begin NAME" and "$M end NAME STATE" lines.
# It never prints a whole configuration file: only the keys kaudit checks.
LC_ALL=C
export LC_ALL
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH
export PATH
b() { printf '%s begin %s\n' "$M" "$1"; }
e() { printf '\n%s end %s %s\n' "$M" "$1" "${2:-ok}"; }
have() { command -v "$1" >/dev/null 2>&1; }
# rd FILE: print it, or say why not
rd() {
	if [ -r "$1" ]; then cat "$1" 2>&1; elif [ -e "$1" ]; then echo "!denied $1"; else echo "!absent $1"; fi
}

b kernel
printf 'release='; rd /proc/sys/kernel/osrelease
printf 'version='; rd /proc/version
if [ -r /proc/version_signature ]; then printf 'signature='; cat /proc/version_signature; fi
printf 'arch=%s\n' "$(uname -m 2>/dev/null)"
e kernel

b os-release
if [ -r /etc/os-release ]; then cat /etc/os-release; e os-release
elif [ -r /usr/lib/os-release ]; then cat /usr/lib/os-release; e os-release
else e os-release absent; fi

b sysctl
for k in $SYSCTLS; do
	p=/proc/sys/$(printf '%s' "$k" | tr . /)
	if [ -r "$p" ]; then printf '%s=' "$k"; tr '\t\n' '  ' < "$p"; echo
	elif [ -e "$p" ]; then printf '%s!denied\n' "$k"
	else printf '%s!absent\n' "$k"; fi
done
e sysctl

# The client profile (a producer/consumer host of the clients group): its
# kernel and sysctls above, and its connections to the brokers' Kafka ports
# (CLIENT_PORTS) with their window scales, at most CONN_LIMIT of them.
if [ "$PROFILE" = client ]; then
	b profile; echo client; e profile
	b conns
	flt=''
	for p in $CLIENT_PORTS; do flt="${flt:+$flt or }dport = :$p"; done
	if ! have ss; then
		echo "ss not found in PATH (install iproute2)"; e conns missing
	else
		{ ss -tin state established "( $flt )" 2>/dev/null || echo "!ss failed: exit $?"; } | awk -v lim="$CONN_LIMIT" "$CONNS_AWK"
		e conns
	fi
	printf '%s done\n' "$M"
	exit 0
fi

b sysctl-files
for d in /etc/sysctl.d /run/sysctl.d /usr/local/lib/sysctl.d /usr/lib/sysctl.d /lib/sysctl.d; do
	for f in "$d"/*.conf; do
		[ -e "$f" ] || [ -L "$f" ] || continue
		if [ -L "$f" ]; then printf '@link %s %s\n' "$f" "$(readlink -f "$f" 2>/dev/null)"; else printf '@file %s\n' "$f"; fi
		[ -r "$f" ] || { echo "!denied $f"; continue; }
		grep -n -v -E '^[[:space:]]*([#;]|$)' "$f" 2>/dev/null
	done
done
if [ -e /etc/sysctl.conf ]; then
	printf '@file /etc/sysctl.conf\n'
	if [ -r /etc/sysctl.conf ]; then grep -n -v -E '^[[:space:]]*([#;]|$)' /etc/sysctl.conf 2>/dev/null; else echo "!denied /etc/sysctl.conf"; fi
fi
e sysctl-files

b kernel-changelog
T='net: Update window_clamp if SOCK_RCVBUF is set'
r=$(cat /proc/sys/kernel/osrelease 2>/dev/null)
st=absent
if have rpm; then
	for pkg in "kernel-$r" "kernel-core-$r" "kernel-uek-$r"; do
		if rpm -q "$pkg" >/dev/null 2>&1; then
			printf 'source=rpm -q --changelog %s\n' "$pkg"
			rpm -q --changelog "$pkg" 2>/dev/null | grep -F -e "$T" -e 'LTS tag: v' | sed 's/^[[:space:]]*//' | sort -u | head -n 400
			st=ok
			break
		fi
	done
fi
if [ "$st" = absent ] && [ -r "/usr/share/doc/linux-image-$r/changelog.Debian.gz" ] && have zcat; then
	printf 'source=/usr/share/doc/linux-image-%s/changelog.Debian.gz\n' "$r"
	zcat "/usr/share/doc/linux-image-$r/changelog.Debian.gz" 2>/dev/null | grep -F -e "$T" | head -n 5
	st=ok
fi
e kernel-changelog "$st"

b netstat
if [ -r /proc/net/netstat ]; then cat /proc/net/netstat; e netstat; else e netstat denied; fi

b listeners
ssout=''
if have ss; then
	# Once: the kafka section below finds the broker's pid in the same output.
	ssout=$(ss -ltnp 2>/dev/null || ss -ltn 2>&1)
	printf '%s\n' "$ssout"
	e listeners
else
	echo "ss not found in PATH (install iproute2)"; e listeners missing
fi

b kafka
pid=''
found=''
kargs=''
if [ -n "$ssout" ]; then
	pid=$(printf '%s\n' "$ssout" | grep -E "[:.]$KAFKA_PORT[[:space:]]" | sed -n 's/.*pid=\([0-9][0-9]*\).*/\1/p' | head -n 1)
	# Only a Kafka broker counts: another program on the port is not one.
	if [ -n "$pid" ] && grep -q -E '[k]afka\.Kafka|[S]upportedKafka' "/proc/$pid/cmdline" 2>/dev/null; then
		found=listener
	else
		pid=''
	fi
fi
if [ -z "$pid" ]; then
	f=$(grep -l -E '[k]afka\.Kafka|[S]upportedKafka' /proc/[0-9]*/cmdline 2>/dev/null | head -n 1)
	if [ -n "$f" ]; then pid=${f#/proc/}; pid=${pid%/cmdline}; found=cmdline; fi
fi
if [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ]; then
	printf 'pid=%s\nfound=%s\n' "$pid" "$found"
	# Only the classpath's kafka* jars and what follows the main class:
	# JVM options (which may carry passwords) never leave the host.
	# Read once: kafka-config below takes the config path from "arg=".
	kargs=$(tr '\0' '\n' < "/proc/$pid/cmdline" 2>/dev/null | awk '
		BEGIN { main = 0; cp = 0 }
		main == 0 && cp == 1 { n = split($0, parts, ":"); for (i = 1; i <= n; i++) print "cp=" parts[i]; cp = 0; next }
		main == 0 && ($0 == "-cp" || $0 == "-classpath" || $0 == "--class-path") { cp = 1; next }
		main == 0 && ($0 == "kafka.Kafka" || $0 ~ /SupportedKafka$/ || $0 == "io.confluent.kafka.Kafka") { main = 1; print "main=" $0; next }
		main == 0 { if (NR == 1) print "exe=" $0; next }
		main == 1 && ov == 1 { k = $0; sub(/=.*/, "", k); if (k ~ /^(socket\.listen\.backlog\.size|socket\.receive\.buffer\.bytes|listeners)$/) print "override=" $0; ov = 0; next }
		main == 1 && $0 == "--override" { ov = 1; next }
		main == 1 && substr($0, 1, 1) != "-" && conf == "" { conf = $0; print "arg=" $0; next }
	')
	printf '%s\n' "$kargs" | while IFS= read -r l; do
		case "$l" in
		cp=*/\*)
			d=${l#cp=}; d=${d%/\*}
			for j in "$d"/kafka_*.jar "$d"/kafka-clients-*.jar; do [ -e "$j" ] && printf 'cp=%s\n' "$j"; done ;;
		cp=*)
			j=${l#cp=}
			case "${j##*/}" in kafka*) printf '%s\n' "$l" ;; esac ;;
		*) printf '%s\n' "$l" ;;
		esac
	done
	e kafka
elif [ -n "$pid" ]; then
	echo "pid=$pid"; e kafka denied
else
	e kafka absent
fi

b kafka-config
conf=$KAFKA_CONFIG
if [ -z "$conf" ] && [ -n "$pid" ]; then
	conf=$(printf '%s\n' "$kargs" | sed -n 's/^arg=//p' | head -n 1)
	case "$conf" in /*) ;; ?*) [ -r "/proc/$pid/cwd" ] && conf=$(readlink "/proc/$pid/cwd")/$conf ;; esac
fi
if [ -z "$conf" ]; then
	e kafka-config absent
elif [ -r "$conf" ]; then
	printf 'path=%s\n' "$conf"
	# Logical lines (with continuations) of the keys kaudit checks, with their line numbers.
	awk '
		{ line = $0; sub(/\r$/, "", line) }
		cont == 1 { buf = buf line; if (line ~ /\\$/) { sub(/\\$/, "", buf); next } cont = 0; emit(); next }
		{ start = NR; buf = line; if (line ~ /\\$/ && line !~ /^[ \t]*[#!]/) { sub(/\\$/, "", buf); cont = 1; next } emit() }
		function emit() { if (buf ~ /^[ \t]*(socket\.listen\.backlog\.size|socket\.receive\.buffer\.bytes|listeners)([ \t]*[=:]|[ \t])/) print start ":" buf }
	' "$conf"
	e kafka-config
elif [ -e "$conf" ]; then
	printf 'path=%s\n' "$conf"; e kafka-config denied
else
	printf 'path=%s\n' "$conf"; e kafka-config absent
fi

b feasibility
# What kaudit's changes need here, read only. The mode of each /proc/sys
# entry (root passes test -w whatever the mode; the kernel still refuses a
# write to a 0444 entry), the net namespace of this shell and of PID 1, the
# directories kaudit writes in, every mount (ro or rw, type), SELinux.
for k in $SYSCTLS; do
	p=/proc/sys/$(printf '%s' "$k" | tr . /)
	[ -e "$p" ] && printf 'mode %s %s\n' "$k" "$(ls -ldn "$p" 2>/dev/null | cut -c1-10)"
done
printf 'netns-self %s\n' "$(readlink /proc/self/ns/net 2>/dev/null)"
printf 'netns-init %s\n' "$(readlink /proc/1/ns/net 2>/dev/null)"
fdir() {
	if [ -d "$1" ]; then w=no; [ -w "$1" ] && w=yes; printf 'dir %s %s %s\n' "$w" "$(ls -ldn "$1" 2>/dev/null | cut -c1-10)" "$1"
	elif [ -e "$1" ]; then printf 'dir notdir - %s\n' "$1"
	else printf 'dir absent - %s\n' "$1"; fi
}
for d in /etc /etc/sysctl.d /etc/udev/rules.d /etc/NetworkManager/system-connections /etc/sysconfig/network-scripts /etc/network /etc/systemd/network; do fdir "$d"; done
case "$conf" in /*/*) fdir "${conf%/*}" ;; esac
[ -r /proc/mounts ] && awk '{ split($4, o, ","); print "mount", o[1], $3, $2 }' /proc/mounts
if [ -r /sys/fs/selinux/enforce ]; then printf 'selinux %s\n' "$(cat /sys/fs/selinux/enforce 2>/dev/null)"; fi
have chcon && echo 'tool chcon'
e feasibility
# Established connections per local address:port of every listening port
# (what would reconnect after a restart), counted here: a broker with
# 100,000 connections sends a few lines. Then the connections on the Kafka
# ports (the inventory's and every port the broker's pid listens on) with
# their window scales, at most CONN_LIMIT of them.
b established
if [ -n "$ssout" ]; then
	lports=$(printf '%s\n' "$ssout" | awk '$1 == "LISTEN" { n = split($4, a, ":"); if (a[n] ~ /^[0-9]+$/) print a[n] }' | sort -u | tr '\n' ' ')
	{ ss -tn state established 2>/dev/null || echo "!ss failed: exit $?"; } | awk -v ports="$lports" "$EST_AWK"
	e established
else
	e established missing
fi
b conns
if [ -n "$ssout" ]; then
	kports=$KAFKA_PORT
	[ -n "$pid" ] && kports="$kports $(printf '%s\n' "$ssout" | grep "pid=$pid," | awk '$1 == "LISTEN" { n = split($4, a, ":"); if (a[n] ~ /^[0-9]+$/) print a[n] }' | sort -u | tr '\n' ' ')"
	flt=''
	for p in $kports; do flt="${flt:+$flt or }sport = :$p"; done
	{ ss -tin state established "( $flt )" 2>/dev/null || echo "!ss failed: exit $?"; } | awk -v lim="$CONN_LIMIT" "$CONNS_AWK"
	e conns
else
	e conns missing
fi

b nics
# npersist IF: what persists the interface's settings, read-only and cheap:
# its MAC, NetworkManager (state, connection name and UUID), an ifcfg file (its
# ETHTOOL_OPTS line), an ifupdown "iface IF" stanza (line, file), systemd's
# 99-default.link, udevadm's version and the other .link files (their
# match keys).
nmv=''
if have nmcli; then nmv=$(nmcli --version 2>/dev/null | sed -n 's/.*version \([0-9][0-9.]*\).*/\1/p' | head -n 1); fi
udv=''
if have udevadm; then udv=$(udevadm --version 2>/dev/null | sed -n '1s/^\([0-9][0-9]*\).*/\1/p'); fi
npersist() {
	printf '@mac %s\n' "$(cat "/sys/class/net/$1/address" 2>/dev/null)"
	if [ -n "$nmv" ]; then
		printf '@nm-version %s\n' "$nmv"
		printf '@nm-state %s\n' "$(nmcli -t -g GENERAL.STATE device show "$1" 2>/dev/null | head -n 1)"
		printf '@nm-connection %s\n' "$(nmcli -t -g GENERAL.CONNECTION device show "$1" 2>/dev/null | head -n 1)"
		printf '@nm-uuid %s\n' "$(nmcli -t -g GENERAL.CON-UUID device show "$1" 2>/dev/null | head -n 1)"
	fi
	have ifup && printf '@ifup %s\n' "$(command -v ifup)"
	f=/etc/sysconfig/network-scripts/ifcfg-$1
	if [ -f "$f" ]; then
		printf '@ifcfg %s\n' "$f"
		grep -n -E '^[[:space:]]*ETHTOOL_OPTS=' "$f" 2>/dev/null | tail -n 1 | sed 's/^/@ifcfg-opts /'
	fi
	re=$(printf '%s' "$1" | sed 's/[].[]/[&]/g')
	for f in /etc/network/interfaces /etc/network/interfaces.d/*; do
		[ -f "$f" ] || continue
		n=$(grep -n -E "^[[:space:]]*iface[[:space:]]+$re([[:space:]]|\$)" "$f" 2>/dev/null | head -n 1 | cut -d: -f1)
		[ -n "$n" ] && printf '@iface %s %s\n' "$n" "$f"
	done
	for f in /lib/systemd/network/99-default.link /usr/lib/systemd/network/99-default.link; do
		[ -f "$f" ] && printf '@link-default %s\n' "$f"
	done
	[ -n "$udv" ] && printf '@udev-version %s\n' "$udv"
	[ -d /etc/systemd/network ] && printf '@link-dir /etc/systemd/network\n'
	for f in /etc/systemd/network/*.link /run/systemd/network/*.link /usr/lib/systemd/network/*.link /lib/systemd/network/*.link; do
		[ -f "$f" ] || continue
		case "$f" in */99-default.link) continue ;; esac
		printf '@link %s\n' "$f"
		grep -E '^[[:space:]]*(OriginalName|MACAddress|PermanentMACAddress|Driver|Name)[[:space:]]*=' "$f" 2>/dev/null | sed 's/^[[:space:]]*/@link-key /'
	done
}
ifs=$IFACES
if [ -z "$ifs" ]; then
	ifs=$( { awk 'NR > 1 && $2 == "00000000" && $8 == "00000000" { print $1 }' /proc/net/route 2>/dev/null
		awk '$1 == "00000000000000000000000000000000" && $2 == "00" && $10 != "lo" { print $10 }' /proc/net/ipv6_route 2>/dev/null; } | awk '!seen[$0]++')
fi
if ! have ethtool; then
	for i in $ifs; do printf '@if %s\n' "$i"; done
	echo "ethtool not found in PATH (install ethtool)"; e nics missing
else
	for i in $ifs; do
		printf '@if %s\n' "$i"
		drv=$(readlink "/sys/class/net/$i/device/driver" 2>/dev/null)
		[ -n "$drv" ] && printf '@driver %s\n' "${drv##*/}"
		printf '@ring\n'; ethtool -g "$i" 2>&1
		# Top-level features only: the tab-indented children are not checked.
		printf '@features\n'; ethtool -k "$i" 2>&1 | grep -v '^	'
		npersist "$i"
	done
	e nics
fi

b evidence
if have dmesg; then
	dmesg 2>&1 | grep -E 'SYN flooding|Operation not permitted|Permission denied|read kernel buffer failed' | tail -n 21
	e evidence
else
	e evidence missing
fi
printf '%s done\n' "$M"
