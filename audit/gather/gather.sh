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
# z: what decompresses gzip to stdout, gzip -cd rather than zcat where
# both are (zcat is a shell script around gzip: one process more).
z=''
if have gzip; then z='gzip -cd'; elif have zcat; then z='zcat'; fi
# Builtins only below where they do the job: every fork and exec costs the
# host more than the SSH session itself, so files are read with read, paths
# built with parameter expansion, and each section printed at once.
NL='
'
# rv FILE: v = the file's text (its lines, newline-joined), or why not.
# Not for /proc/sys: the shell's read takes a byte at a time, and a sysctl
# entry answers only the first read.
rv() {
	v=''
	if [ -r "$1" ]; then
		while IFS= read -r l || [ -n "$l" ]; do v="$v$l$NL"; done < "$1"
		v=${v%"$NL"}
	elif [ -e "$1" ]; then v="!denied $1"; else v="!absent $1"; fi
}
# sp KEY: p = the /proc/sys path of a dotted sysctl key.
sp() {
	p=/proc/sys
	o=$IFS; IFS=.
	for x in $1; do p=$p/$x; done
	IFS=$o
}

# why FILE: a = FILE when it is readable, else why not ("!denied FILE").
why() { if [ -r "$1" ]; then a=$1; elif [ -e "$1" ]; then a="!denied $1"; else a="!absent $1"; fi; }

# The kernel, sysctl, netstat and sysctl-files sections, read by one awk:
# its arguments are pairs, LABEL FILE (LABEL, then the file's lines joined
# by spaces, tabs made spaces), LABEL !WHY (LABEL!WHY: the file is not
# read), "" TEXT, @raw FILE (the file's lines as they are) or @num FILE
# (its non-comment lines, numbered: sysctl-files). For later sections it also
# writes on fd 3 (into $early): @file FILE, the host section's line of a
# catalog file; @route and @route6 FILE, "@if NAME" per default-route
# interface of /proc/net/route and /proc/net/ipv6_route (the nics).
why /proc/sys/kernel/osrelease; set -- "" "$M begin kernel" release= "$a"
why /proc/version; set -- "$@" version= "$a"
[ -r /proc/version_signature ] && set -- "$@" signature= /proc/version_signature
if [ -r /proc/sys/kernel/arch ]; then set -- "$@" arch= /proc/sys/kernel/arch; else set -- "$@" "" "arch=$(uname -m 2>/dev/null)"; fi
[ -r /proc/sys/kernel/random/boot_id ] && set -- "$@" boot_id= /proc/sys/kernel/random/boot_id
set -- "$@" "" "$NL$M end kernel ok" "" "$M begin sysctl"
for k in $SYSCTLS; do
	sp "$k"
	if [ -r "$p" ]; then set -- "$@" "$k=" "$p"
	elif [ -e "$p" ]; then set -- "$@" "$k" "!denied"
	else set -- "$@" "$k" "!absent"; fi
done
set -- "$@" "" "$NL$M end sysctl ok"
if [ -r /proc/net/netstat ]; then set -- "$@" "" "$M begin netstat" @raw /proc/net/netstat "" "$NL$M end netstat ok"
else set -- "$@" "" "$M begin netstat$NL$NL$M end netstat denied"; fi
# Persisted sysctls: every file systemd-sysctl reads, in its directories'
# order, then /etc/sysctl.conf, read by the first awk: "@file F" (or
# "@link F TARGET", or "!denied F"), then the file's non-comment lines,
# numbered (@num F). Not on a client host.
if [ "$PROFILE" != client ]; then
	set -- "$@" "" "$M begin sysctl-files"
	for d in /etc/sysctl.d /run/sysctl.d /usr/local/lib/sysctl.d /usr/lib/sysctl.d /lib/sysctl.d; do
		[ -d "$d" ] || continue
		for f in "$d"/*.conf; do
			[ -e "$f" ] || [ -L "$f" ] || continue
			if [ -L "$f" ]; then h="@link $f $(readlink -f "$f" 2>/dev/null)"; else h="@file $f"; fi
			if [ -r "$f" ]; then set -- "$@" "" "$h" @num "$f"; else set -- "$@" "" "$h$NL!denied $f"; fi
		done
	done
	if [ -e /etc/sysctl.conf ]; then
		if [ -r /etc/sysctl.conf ]; then set -- "$@" "" "@file /etc/sysctl.conf" @num /etc/sysctl.conf
		else set -- "$@" "" "@file /etc/sysctl.conf$NL!denied /etc/sysctl.conf"; fi
	fi
	set -- "$@" "" "$NL$M end sysctl-files ok"
fi
hd=''
if [ "$PROFILE" != client ]; then
	for f in $FILES; do
		if [ -r "$f" ]; then set -- "$@" @file "$f"; elif [ -e "$f" ]; then hd="${hd}file $f!denied$NL"; else hd="${hd}file $f!absent$NL"; fi
	done
	if [ -z "$IFACES" ]; then
		[ -r /proc/net/route ] && set -- "$@" @route /proc/net/route
		[ -r /proc/net/ipv6_route ] && set -- "$@" @route6 /proc/net/ipv6_route
	fi
fi
exec 4>&1
early=$(awk 'BEGIN {
	for (i = 1; i < ARGC; i += 2) {
		l = ARGV[i]; f = ARGV[i + 1]
		if (l == "@raw") { while ((getline v < f) > 0) print v; close(f); continue }
		if (l == "@num") {
			n = 0
			while ((getline v < f) > 0) { n++; if (v !~ /^[ \t\r\v\f]*([#;]|$)/) print n ":" v }
			close(f); continue
		}
		if (l == "@file") {
			s = ""; sep = ""; n = 0; rc = 0
			while (n < 64 && (rc = getline v < f) > 0) { s = s sep v; sep = " "; n++ }
			close(f)
			gsub(/\t/, " ", s)
			print "file " f ((rc < 0 && n == 0) ? "!unreadable" : "=" s) > "/dev/fd/3"
			continue
		}
		if (l == "@route") {
			n = 0
			while ((getline v < f) > 0) if (n++ > 0 && split(v, a) >= 8 && a[2] == "00000000" && a[8] == "00000000" && !rt[a[1]]++) print "@if " a[1] > "/dev/fd/3"
			close(f); continue
		}
		if (l == "@route6") {
			while ((getline v < f) > 0) if (split(v, a) >= 10 && a[1] == "00000000000000000000000000000000" && a[2] == "00" && a[10] != "lo" && !rt[a[10]]++) print "@if " a[10] > "/dev/fd/3"
			close(f); continue
		}
		if (l == "" || substr(f, 1, 1) == "!") { print l f; continue }
		s = ""; sep = ""
		while ((getline v < f) > 0) { s = s sep v; sep = " " }
		close(f)
		gsub(/\t/, " ", s)
		print l s
	}
}' "$@" 3>&1 >&4)
exec 4>&-
hf=''; dr=''
o=$IFS; IFS=$NL; set -f
for l in $early; do case $l in "@if "*) dr="$dr ${l#@if }" ;; *) hf="$hf$l$NL" ;; esac; done
set +f; IFS=$o

if [ -r /etc/os-release ]; then rv /etc/os-release; st=ok
elif [ -r /usr/lib/os-release ]; then rv /usr/lib/os-release; st=ok
else v=''; st=absent; fi
printf '%s begin os-release\n%s\n%s end os-release %s\n' "$M" "$v" "$M" "$st"

# The client profile (a producer/consumer host of the clients group): its
# kernel and sysctls above, and its connections to the brokers' Kafka ports
# (CLIENT_PORTS) with their window scales, at most CONN_LIMIT of them.
if [ "$PROFILE" = client ]; then
	printf '%s begin profile\nclient\n\n%s end profile ok\n%s begin conns\n' "$M" "$M" "$M"
	flt=''
	for p in $CLIENT_PORTS; do flt="${flt:+$flt or }dport = :$p"; done
	if ! have ss; then
		echo "ss not found in PATH (install iproute2)"; e conns missing
	else
		{ ss -tin state established "( $flt )" 2>/dev/null || echo "!ss failed: exit $?"; } | awk -v mode=client -v lim="$CONN_LIMIT" "$SOCKETS_AWK"
		e conns
	fi
	printf '%s done\n' "$M"
	exit 0
fi

b kernel-changelog
T='net: Update window_clamp if SOCK_RCVBUF is set'
# The release only where a changelog can be read (cheap tests first).
r=''
# (read, not cat: osrelease is a string entry, which answers byte reads)
if have rpm || { set -- /usr/share/doc/linux-image-*/changelog.Debian.gz; [ -e "$1" ]; }; then { read -r r < /proc/sys/kernel/osrelease; } 2>/dev/null; fi
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
if [ "$st" = absent ] && [ -r "/usr/share/doc/linux-image-$r/changelog.Debian.gz" ] && [ -n "$z" ]; then
	printf 'source=/usr/share/doc/linux-image-%s/changelog.Debian.gz\n' "$r"
	$z "/usr/share/doc/linux-image-$r/changelog.Debian.gz" 2>/dev/null | grep -F -e "$T" | head -n 5
	st=ok
fi
e kernel-changelog "$st"

# The broker: the pids whose command line is a Kafka broker's (one grep
# over /proc), then one ss run that sockets.awk turns into the listeners,
# established and conns sections, writing on fd 3 which pid is the broker
# (the one listening on KAFKA_PORT if it is a broker, else the first).
# KKEYS (set by the header): the server.properties keys kaudit reads, as
# an awk regular expression (gather.KafkaKeys and the catalog's checks'
# keys): nothing else leaves the host, because the file can hold secrets.
kpids=''
kc=''
kcread=''
# shellcheck disable=SC2013 # grep -l prints /proc/PID/cmdline paths: no spaces
for f in $(grep -l -E '[k]afka\.Kafka|[S]upportedKafka' /proc/[0-9]*/cmdline 2>/dev/null); do
	f=${f#/proc/}; kpids="$kpids ${f%/cmdline}"
done
pid=''
found=''
if have ss; then
	# -p (who owns each socket) reads every descriptor of every process on
	# the host; its pids only ever name the broker among kpids, so without
	# a broker candidate the listeners go without their users:((…)).
	so=-tinp; [ -n "$kpids" ] || so=-tin
	exec 4>&1
	pf=$( { ss $so state listening state established 2>/dev/null || ss -tin state listening state established 2>&1 || echo "!ss failed: exit $?"; } |
		awk -v mode=broker -v M="$M" -v kport="$KAFKA_PORT" -v kpids="$kpids" -v lim="$CONN_LIMIT" "$SOCKETS_AWK" 3>&1 >&4)
	exec 4>&-
	pid=${pf%% *}; found=${pf#* }
	case $pid in *[!0-9]*) pid='' ;; esac
else
	printf '%s begin listeners\nss not found in PATH (install iproute2)\n\n%s end listeners missing\n' "$M" "$M"
	printf '%s begin established\n\n%s end established missing\n%s begin conns\n\n%s end conns missing\n' "$M" "$M" "$M" "$M"
	for p in $kpids; do pid=$p; found=cmdline; break; done
fi

b kafka
kargs=''
hp=''
kread=''
if [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ]; then
	# Only the classpath's kafka* jars and what follows the main class:
	# JVM options (which may carry passwords) never leave the host, but
	# -Xms and -Xmx, kept for broker-process ("heap -Xmx6g": hp).
	# Read once: kafka-config below takes the config path from "arg=".
	kread=1
	kargs=$(tr '\0' '\n' < "/proc/$pid/cmdline" 2>/dev/null | awk -v kk="$KKEYS" '
		BEGIN { main = 0; cp = 0 }
		main == 0 && /^-Xm[sx][0-9]+[kKmMgGtT]?$/ { print "heap " $0 }
		main == 0 && cp == 1 { n = split($0, parts, ":"); for (i = 1; i <= n; i++) print "cp=" parts[i]; cp = 0; next }
		main == 0 && ($0 == "-cp" || $0 == "-classpath" || $0 == "--class-path") { cp = 1; next }
		main == 0 && ($0 == "kafka.Kafka" || $0 ~ /SupportedKafka$/ || $0 == "io.confluent.kafka.Kafka") { main = 1; print "main=" $0; next }
		main == 0 { if (NR == 1) print "exe=" $0; next }
		main == 1 && ov == 1 { k = $0; sub(/=.*/, "", k); if (k ~ ("^(" kk ")$")) print "override=" $0; ov = 0; next }
		main == 1 && $0 == "--override" { ov = 1; next }
		main == 1 && substr($0, 1, 1) != "-" && conf == "" { conf = $0; print "arg=" $0; next }
	')
	t="pid=$pid${NL}found=$found$NL"
	o=$IFS; IFS=$NL; set -f
	for l in $kargs; do
		case "$l" in
		cp=*/\*)
			d=${l#cp=}; d=${d%/\*}
			set +f
			for j in "$d"/kafka_*.jar "$d"/kafka-clients-*.jar; do [ -e "$j" ] && t="${t}cp=$j$NL"; done
			set -f ;;
		cp=*)
			j=${l#cp=}
			case "${j##*/}" in kafka*) t="$t$l$NL" ;; esac ;;
		heap\ *) hp="$hp$l$NL" ;;
		*) t="$t$l$NL" ;;
		esac
	done
	set +f; IFS=$o
	printf '%s' "$t"
	e kafka
elif [ -n "$pid" ]; then
	echo "pid=$pid"; e kafka denied
else
	e kafka absent
fi

b kafka-config
conf=$KAFKA_CONFIG
if [ -z "$conf" ] && [ -n "$pid" ]; then
	case "$NL$kargs" in *"${NL}arg="*) c=$NL$kargs; c=${c#*"${NL}arg="}; conf=${c%%"$NL"*} ;; esac
	case "$conf" in /*) ;; ?*) [ -r "/proc/$pid/cwd" ] && conf=$(readlink "/proc/$pid/cwd")/$conf ;; esac
fi
if [ -z "$conf" ]; then
	e kafka-config absent
elif [ -r "$conf" ]; then
	printf 'path=%s\n' "$conf"
	# Logical lines of the keys kaudit checks, with their line numbers (kafkaconf.awk).
	kc=$(awk -v kk="$KKEYS" "$KCONF_AWK" "$conf")
	printf '%s\n' "$kc"
	kcread=1
	e kafka-config
elif [ -e "$conf" ]; then
	printf 'path=%s\n' "$conf"; e kafka-config denied
else
	printf 'path=%s\n' "$conf"; e kafka-config absent
fi

# The broker's log directories as Kafka picks them: log.dirs over log.dir,
# --override over the file, Kafka's default /tmp/kafka-logs when the file
# was read and names neither. One per line; empty when no broker or no
# readable configuration. The sections that look inside them read this.
logdirs=''
mi=''
# shellcheck disable=SC2034 # read by the log-dirs and kafka-meta sections
if [ -n "$pid" ] && [ -n "$kc$kargs" ]; then
	logdirs=$(printf '%s\n%s\n' "$kc" "$kargs" | awk -v read="$kcread" '
		{ l = $0; ov = sub(/^override=/, "", l); if (!ov && !sub(/^[0-9]+:[ \t]*/, "", l)) next }
		!match(l, /^log[.]dirs?([ \t]*[=:][ \t]*|[ \t]+)/) { next }
		{ k = (l ~ /^log[.]dirs/) ? "dirs" : "dir"; v = substr(l, RLENGTH + 1); sub(/[ \t]+$/, "", v); val[k ov] = v }
		END {
			d = ("dirs1" in val) ? val["dirs1"] : ("dirs0" in val) ? val["dirs0"] : ("dir1" in val) ? val["dir1"] : ("dir0" in val) ? val["dir0"] : ""
			if (d == "" && read != "") d = "/tmp/kafka-logs"
			n = split(d, ds, ","); for (i = 1; i <= n; i++) { x = ds[i]; gsub(/^[ \t]+|[ \t]+$/, "", x); if (x != "") print x }
		}')
fi

# The broker process's own view of itself (/proc/PID): its open-files
# limit, descriptors and memory maps in use (counted here: the fd table
# and the maps never leave the host), its swap, the JVM it runs on (the
# release file beside its java) and only -Xms/-Xmx of its JVM options (the
# other options can hold passwords), and the host's MemTotal. A file the
# login cannot read (fd, maps and exe of another user's process) says
# "!denied PATH".
b broker-process
if [ -n "$pid" ] && [ -d "/proc/$pid" ]; then
	d=/proc/$pid
	set --
	for x in "$d/limits" "$d/status" /proc/meminfo; do
		if [ -r "$x" ]; then set -- "$@" "$x"; else echo "file !denied $x"; fi
	done
	[ $# -gt 0 ] && awk '
		FILENAME ~ /limits$/ && /^Max open files / { print "limits " $0 }
		FILENAME ~ /status$/ && /^VmSwap:/ { print "status " $0 }
		FILENAME == "/proc/meminfo" && /^MemTotal:/ { print "meminfo " $0 }' "$@"
	if [ -r "$d/fd" ] && [ -x "$d/fd" ]; then
		set -- "$d"/fd/*; [ -e "$1" ] || [ -L "$1" ] || set --; echo "fds $#"
	else echo "fds !denied $d/fd"; fi
	if n=$(awk 'END { print NR }' "$d/maps" 2>/dev/null); then echo "maps $n"; else echo "maps !denied $d/maps"; fi
	x=$(readlink "$d/exe" 2>/dev/null); from=proc
	if [ -z "$x" ]; then
		# the command line's argv[0] (world-readable) when exe is not
		case "$NL$kargs" in *"${NL}exe=/"*) x=$NL$kargs; x=${x#*"${NL}exe="}; x=${x%%"$NL"*}; from=cmdline
			have readlink && y=$(readlink -f "$x" 2>/dev/null) && [ -n "$y" ] && x=$y ;; esac
	fi
	if [ -n "$x" ]; then
		printf 'exe %s %s\n' "$from" "$x"
		r=${x%/bin/java}; r=${r%/jre}
		if [ "$r" = "$x" ]; then echo "release !absent (not a .../bin/java)"
		elif [ -r "$r/release" ]; then
			while IFS= read -r l || [ -n "$l" ]; do case $l in JAVA_VERSION=*) echo "release $l"; break ;; esac; done < "$r/release"
		elif [ -e "$r/release" ]; then echo "release !denied $r/release"
		else echo "release !absent $r/release"; fi
	else echo "exe !denied $d/exe"; fi
	if [ -n "$kread" ]; then printf '%s' "$hp"; else echo "heap !denied $d/cmdline"; fi
	e broker-process
else
	e broker-process absent
fi

# Which cluster and node each log directory belongs to: only the identity
# keys of DIR/meta.properties (version, cluster.id, node.id, broker.id,
# directory.id), never the rest of the file. Kafka writes it with
# java.util.Properties.store: "#" comment lines, then key=value lines.
b kafka-meta
if [ -z "$logdirs" ]; then
	e kafka-meta absent
else
	st=ok
	while IFS= read -r d; do
		printf 'dir=%s\n' "$d"
		f=$d/meta.properties
		if [ -r "$f" ]; then
			while IFS= read -r l || [ -n "$l" ]; do
				case "$l" in version=* | cluster.id=* | node.id=* | broker.id=* | directory.id=*) printf 'meta=%s\n' "$l" ;; esac
			done < "$f"
		elif [ -e "$f" ]; then
			echo '!denied'; st=partial
		else echo '!absent'; fi
	done <<EOF_LOGDIRS
$logdirs
EOF_LOGDIRS
	e kafka-meta "$st"
fi

# The log directories' filesystems: each directory's real path (symlinks
# resolved with pwd -P), its segment count (the *.index files of its
# partition directories, counted here so no file name leaves the host;
# -1 when find could not read every one), then the mountinfo lines of
# every mount point above a real path, "/" always (one awk compares the
# paths escaped as mountinfo escapes them: \134 \040 \011 \012).
b log-dirs
if [ -z "$logdirs" ]; then
	e log-dirs absent
elif [ ! -r /proc/self/mountinfo ]; then
	echo '!denied /proc/self/mountinfo'; e log-dirs denied
else
	reals=''
	o=$IFS; IFS=$NL; set -f
	for d in $logdirs; do
		printf 'dir=%s\n' "$d"
		r=$(cd "$d" 2>/dev/null && pwd -P) || continue
		n=$( { find "$r" -maxdepth 2 -name lost+found -prune -o -type f -name '*.index' -print 2>/dev/null || echo '!'; } | awk '$0 == "!" { bad = 1; next } /[.]index$/ { n++ } END { print bad ? -1 : n + 0 }')
		printf 'real=%s\nsegments=%s\n' "$r" "$n"
		reals="$reals$r$NL"
	done
	set +f; IFS=$o
	# Kept in mi for the log-devices section (their device numbers).
	mi=$(R=$reals awk '
		function esc(p) { gsub(/\\/, "\\134", p); gsub(/ /, "\\040", p); gsub(/\t/, "\\011", p); return p }
		BEGIN { n = split(ENVIRON["R"], r, "\n"); for (i = 1; i <= n; i++) r[i] = esc(r[i]) }
		$5 == "/" { print "mi=" $0; next }
		{ for (i = 1; i <= n; i++) if (r[i] != "" && (r[i] == $5 || index(r[i], $5 "/") == 1)) { print "mi=" $0; next } }
	' /proc/self/mountinfo)
	[ -n "$mi" ] && printf '%s\n' "$mi"
	e log-dirs
fi

# The systemd service the broker runs in, from its cgroup (cgroups(7)):
# the unified line, or the v1 name=systemd one on a v1 or hybrid host.
# The Go side decides whether that is a system service; this picks the
# candidate to ask systemd about (what it gives the unit at its next
# start), its name checked before it reaches systemctl.
u=''
b broker-unit
if [ -z "$pid" ]; then
	e broker-unit absent
elif [ ! -r "/proc/$pid/cgroup" ]; then
	printf 'pid=%s\n' "$pid"; e broker-unit denied
else
	cg=$(awk '{ print "cgroup=" $0 }' "/proc/$pid/cgroup" 2>/dev/null)
	u=$(printf '%s\n' "$cg" | awk -F: '
		$2 == "name=systemd" && $3 != "/" { v1 = $3 } $1 == "cgroup=0" && $2 == "" { v2 = $3 }
		END { p = (v1 != "") ? v1 : v2; n = split(p, c, "/"); for (i = 1; i <= n; i++) if (c[i] ~ /[.]service$/) { print c[i]; exit } }')
	case "$u" in *[!A-Za-z0-9:_.@-]* | .service) u='' ;; *.service) ;; *) u='' ;; esac
	printf 'pid=%s\n%s\n' "$pid" "$cg"
	if [ -d /run/systemd/system ]; then echo systemd=yes; else echo systemd=no; fi
	if [ -n "$u" ] && [ -d /run/systemd/system ] && have systemctl; then
		printf 'unit=%s\n' "$u"
		systemctl show -p LimitNOFILE -p LimitNOFILESoft -p FragmentPath -p DropInPaths -- "$u" 2>&1 | awk '{ print "show=" $0 }'
	fi
	e broker-unit
fi

# The broker's memory cgroup (cgroups(7)): the memory controller's line of
# /proc/PID/cgroup (v1 "N:…memory…:PATH", else the v2 "0::PATH"), then
# under the mount systemd and container runtimes use (/sys/fs/cgroup/memory
# for v1, /sys/fs/cgroup for v2) whether the broker's pid is in that
# directory's cgroup.procs (proof it is the broker's cgroup, at most 4096
# lines read) and the limits of the cgroup and of each ancestor up to the
# root (v2 memory.max and memory.high, v1 memory.limit_in_bytes): "limit
# FILE VALUE PATH", VALUE "!denied" or "!absent". Builtins only.
b broker-cgroup
if [ -z "$pid" ]; then
	e broker-cgroup absent
elif [ ! -r "/proc/$pid/cgroup" ]; then
	printf '!denied /proc/%s/cgroup\n' "$pid"; e broker-cgroup denied
else
	cv=''; cp=''
	while IFS=: read -r n c x; do
		case ",$c," in *,memory,*) cv=1; cp=$x; break ;; esac
		[ "$n" = 0 ] && [ -z "$c" ] && [ -z "$cv" ] && { cv=2; cp=$x; }
	done < "/proc/$pid/cgroup"
	case $cv in
	1) cb=/sys/fs/cgroup/memory; cf=memory.limit_in_bytes ;;
	2) cb=/sys/fs/cgroup; cf='memory.max memory.high' ;;
	*) cb='' ;;
	esac
	if [ -z "$cb" ]; then
		echo version 0
	elif [ ! -d "$cb${cp%/}" ]; then
		printf 'version %s\npath %s\nnodir %s\n' "$cv" "$cp" "$cb${cp%/}"
	else
		printf 'version %s\npath %s\n' "$cv" "$cp"
		m=unknown; n=0
		if [ -r "$cb${cp%/}/cgroup.procs" ]; then
			m=no
			while [ $n -lt 4096 ] && read -r x; do
				n=$((n + 1)); [ "$x" = "$pid" ] && { m=yes; break; }
			done < "$cb${cp%/}/cgroup.procs"
			[ "$m" = no ] && [ $n -ge 4096 ] && m=unknown
		fi
		echo "member $m"
		x=$cp; n=0
		while [ $n -lt 32 ]; do
			for f in $cf; do
				if [ -r "$cb${x%/}/$f" ]; then read -r v < "$cb${x%/}/$f"; echo "limit $f $v $x"
				elif [ -e "$cb${x%/}/$f" ]; then echo "limit $f !denied $x"
				else echo "limit $f !absent $x"; fi
			done
			[ "$x" = / ] && break
			x=${x%/*}; [ -n "$x" ] || x=/
			n=$((n + 1))
		done
	fi
	e broker-cgroup
fi

# The block devices under the log directories: each device number of the
# log-dirs section's mounts (mi) followed through /sys/dev/block to its
# node, a partition to its disk, a dm or md device through slaves/ to the
# nodes below (at most 64 nodes; a loop device's backing file is not
# followed), and each node's kind and queue settings
# (scheduler, read_ahead_kb, rotational). Builtins only: cd -P resolves
# the links.
b log-devices
if [ -z "$mi" ]; then
	e log-devices absent
elif [ ! -d /sys/dev/block ]; then
	echo '!absent /sys/dev/block'; e log-devices absent
else
	d0=$PWD; q=''; seen=' '
	o=$IFS; IFS=$NL; set -f
	for l in $mi; do
		IFS=' '
		# shellcheck disable=SC2086 # a mountinfo line's fields (globbing is off)
		set -- $l
		IFS=$NL
		case "$seen" in *" $3 "*) continue ;; esac
		seen="$seen$3 "
		if cd -P "/sys/dev/block/$3" 2>/dev/null; then echo "dev $3 ${PWD##*/}"; q="$q ${PWD##*/}"; else echo "dev $3 !absent"; fi
	done
	set +f; IFS=$o
	seen=' '; n=0
	while [ -n "$q" ]; do
		# shellcheck disable=SC2086 # kernel node names, one word each
		set -- $q; [ $# -gt 0 ] || break
		x=$1; shift; q=$*
		case "$seen" in *" $x "*) continue ;; esac
		[ $n -ge 64 ] && { echo truncated; break; }
		seen="$seen$x "; n=$((n + 1)); s=/sys/class/block/$x
		if [ -e "$s/partition" ]; then
			cd -P "$s" 2>/dev/null && { y=${PWD%/*}; echo "node $x partition ${y##*/}"; q="$q ${y##*/}"; }
			continue
		elif [ -d "$s/dm" ]; then rv "$s/dm/name"; echo "node $x dm ${v%%"$NL"*}"
		elif [ -d "$s/md" ]; then echo "node $x md"
		elif [ -d "$s/loop" ]; then echo "node $x loop"
		else echo "node $x disk"; fi
		for y in "$s"/slaves/*; do [ -e "$y" ] || [ -L "$y" ] && { echo "slave $x ${y##*/}"; q="$q ${y##*/}"; }; done
		for f in scheduler read_ahead_kb rotational; do rv "$s/queue/$f"; echo "queue $x $f $v"; done
	done
	cd "$d0" 2>/dev/null || cd /
	e log-devices
fi

# What kaudit's changes need here, read only. The mode of each /proc/sys
# entry (root passes test -w whatever the mode; the kernel still refuses a
# write to a 0444 entry), the net namespace of this shell and of PID 1, the
# directories kaudit writes in, every mount (ro or rw, type), SELinux. One
# ls gives every mode and both namespace links; one awk prints them.
set --
for k in $SYSCTLS; do sp "$k"; [ -e "$p" ] && set -- "$@" "$p"; done
FD=''
cdir=''
case "$conf" in /*/*) cdir=${conf%/*} ;; esac
udir=''
[ -n "$u" ] && udir=/etc/systemd/system/$u.d
for d in /etc /etc/sysctl.d /etc/systemd/system /etc/udev/rules.d /etc/NetworkManager/system-connections /etc/sysconfig/network-scripts /etc/network /etc/systemd/network "$cdir" "$udir"; do
	[ -n "$d" ] || continue
	if [ -d "$d" ]; then w=no; [ -w "$d" ] && w=yes; set -- "$@" "$d"
	elif [ -e "$d" ]; then w=notdir
	else w=absent; fi
	FD="$FD$w $d$NL"
done
mounts=0; [ -r /proc/mounts ] && mounts=1
b feasibility
# shellcheck disable=SC2012 # ls -ldn's mode, owner and mount of paths kaudit chose: the awk parses them
ls -ldn "$@" /proc/self/ns/net /proc/1/ns/net 2>/dev/null | FD=$FD awk -v keys="$SYSCTLS" -v mounts="$mounts" "$FEAS_AWK"
if [ -r /sys/fs/selinux/enforce ]; then rv /sys/fs/selinux/enforce; printf 'selinux %s\n' "$v"; fi
have chcon && echo 'tool chcon'
# Signs of a container, which shares its kernel with the node: a kernel-wide
# sysctl (vm.*, fs.*, kernel.*) written here is the node's. Files only, as
# systemd-detect-virt reads them; nothing is run.
if [ -r /run/systemd/container ]; then rv /run/systemd/container; printf 'container %s /run/systemd/container\n' "${v%%"$NL"*}"; fi
[ -e /run/.containerenv ] && echo 'container podman /run/.containerenv'
[ -e /.dockerenv ] && echo 'container docker /.dockerenv'
[ -d /var/run/secrets/kubernetes.io ] && echo 'container kubernetes /var/run/secrets/kubernetes.io'
e feasibility

# What the running kernel has and can load, read only (nothing is
# loaded): the congestion controls registered now, whether modules can be
# loaded at all (/proc/modules exists only with CONFIG_MODULES;
# kernel.modules_disabled), the tcp_* and sch_* modules of the running
# release (modules.dep, what modprobe reads; without it the module files)
# and those built in (modules.builtin), and the CONFIG_MODULES,
# CONFIG_TCP_CONG_* and CONFIG_NET_SCH_* options of its configuration
# (/proc/config.gz through $z, else /boot/config-RELEASE). Two processes
# at most: gzip and one awk, which reads the release and every file and
# picks the module tree of the release among those globbed here.
KD=''
for d in /lib/modules/*/ /usr/lib/modules/*/; do [ -d "$d" ] && KD="$KD${d%/}$NL"; done
KF=''
if [ -n "$KD" ]; then
	for f in /lib/modules/*/kernel/net/ipv4/tcp_*.ko* /lib/modules/*/kernel/net/sched/sch_*.ko* /usr/lib/modules/*/kernel/net/ipv4/tcp_*.ko* /usr/lib/modules/*/kernel/net/sched/sch_*.ko*; do
		[ -e "$f" ] && KF="$KF$f$NL"
	done
fi
pm=no; [ -e /proc/modules ] && pm=yes
# shellcheck disable=SC2016 # an awk program: its $0 is awk's
kcawk='/^CONFIG_(MODULES|TCP_CONG_[A-Z0-9_]+|NET_SCH_[A-Z0-9_]+)=[ym]$/ { cfg[++nc] = $0 }
function one(label, f,   v) {
	if ((getline v < f) > 0) { gsub(/\t/, " ", v); print label " " v } else print label " !unreadable " f
	close(f)
}
function list(label, f,   v, rc) {
	while ((rc = (getline v < f)) > 0) {
		sub(/:.*/, "", v)
		if (v !~ /(^|\/)(tcp|sch)_[a-z0-9_]+\.ko(\.[a-z0-9]+)?$/) continue
		sub(/.*\//, "", v); sub(/\.ko.*$/, "", v)
		print label " " v
	}
	close(f)
	if (rc < 0) { print label " !unreadable " f; return 0 }
	return 1
}
END {
	f = "/proc/sys/kernel/osrelease"
	if ((getline r < f) <= 0 || r !~ /^[A-Za-z0-9._+~-]+$/) r = ""
	close(f)
	print "release " (r == "" ? "!unreadable" : r)
	print "proc-modules " pm
	md = ""
	n = split(ENVIRON["KD"], ds, "\n")
	for (i = 1; i <= n && r != ""; i++) if (md == "" && substr(ds[i], length(ds[i]) - length(r)) == "/" r) md = ds[i]
	print "module-dir " (md == "" ? "!absent" : md)
	one("cc-available", "/proc/sys/net/ipv4/tcp_available_congestion_control")
	one("modules-disabled", "/proc/sys/kernel/modules_disabled")
	if (md != "") {
		if (!list("dep", md "/modules.dep")) {
			n = split(ENVIRON["KF"], fs, "\n")
			for (i = 1; i <= n; i++) if (index(fs[i], md "/kernel/") == 1) { v = fs[i]; sub(/.*\//, "", v); sub(/\.ko.*$/, "", v); print "file " v }
		}
		list("builtin", md "/modules.builtin")
	}
	if (src == "/proc/config.gz") lines = NR
	else if (src == "" && r != "") {
		f = "/boot/config-" r
		while ((getline v < f) > 0) { lines++; if (v ~ /^CONFIG_(MODULES|TCP_CONG_[A-Z0-9_]+|NET_SCH_[A-Z0-9_]+)=[ym]$/) cfg[++nc] = v }
		close(f)
		if (lines > 0) src = f
	}
	if (src != "") print "config-source " src
	for (i = 1; i <= nc; i++) print "config " cfg[i]
	if (src ~ /^\//) print "config-done " lines
}'
b kernel-caps
if [ -r /proc/config.gz ] && [ -n "$z" ]; then
	$z /proc/config.gz 2>/dev/null | KD=$KD KF=$KF awk -v pm="$pm" -v src=/proc/config.gz "$kcawk"
elif [ -r /proc/config.gz ]; then
	KD=$KD KF=$KF awk -v pm="$pm" -v src='!nozcat /proc/config.gz' "$kcawk" < /dev/null
else
	KD=$KD KF=$KF awk -v pm="$pm" -v src='' "$kcawk" < /dev/null
fi
e kernel-caps

b nics
# npersist IF: what persists the interface's settings, read-only and cheap:
# its MAC, NetworkManager (state, connection name and UUID), an ifcfg file (its
# ETHTOOL_OPTS line), an ifupdown "iface IF" stanza (line, file), systemd's
# 99-default.link, udevadm's version and the other .link files (their
# match keys). What is the same for every interface is read once, and
# only when there is one: the inventory's, else the default route's.
ifs=${IFACES:-$dr}
nmv=''
if [ -n "$ifs" ] && have nmcli; then nmv=$(nmcli --version 2>/dev/null | sed -n 's/.*version \([0-9][0-9.]*\).*/\1/p' | head -n 1); fi
udv=''
if [ -n "$ifs" ] && have udevadm; then udv=$(udevadm --version 2>/dev/null); udv=${udv%%"$NL"*}; udv=${udv%%[!0-9]*}; fi
ifup=''
have ifup && ifup=$(command -v ifup)
ln=''
for f in /lib/systemd/network/99-default.link /usr/lib/systemd/network/99-default.link; do
	[ -f "$f" ] && ln="$ln@link-default $f$NL"
done
[ -n "$udv" ] && ln="$ln@udev-version $udv$NL"
[ -d /etc/systemd/network ] && ln="$ln@link-dir /etc/systemd/network$NL"
set --
for f in /etc/systemd/network/*.link /run/systemd/network/*.link /usr/lib/systemd/network/*.link /lib/systemd/network/*.link; do
	[ -f "$f" ] || continue
	case "$f" in */99-default.link) continue ;; esac
	set -- "$@" "$f"
done
[ $# -gt 0 ] && [ -n "$ifs" ] && ln="$ln$(awk 'BEGIN {
	for (i = 1; i < ARGC; i++) {
		print "@link " ARGV[i]
		n = 0; m = 0
		while ((getline l < ARGV[i]) > 0) {
			m++
			if (l ~ /^[ \t]*(OriginalName|MACAddress|PermanentMACAddress|Driver|Name)[ \t]*=/) { k = l; sub(/^[ \t]*/, "", k); print "@link-key " k }
			# Every line but comments, for the boot-time settings (bounded).
			if (l !~ /^[ \t]*([#;]|$)/ && n++ < 200) print "@link-line " m " " l
		}
		close(ARGV[i])
	}
}' "$@")$NL"
# .link files masked by a link to /dev/null (or empty: no settings).
for f in /etc/systemd/network/*.link /run/systemd/network/*.link; do
	[ -c "$f" ] && ln="$ln@link-null $f$NL"
done
# udev rules that run ethtool, in every rules directory (a name in an
# earlier directory masks the same name in a later one); a name linked to
# /dev/null masks too.
set --
for f in /etc/udev/rules.d/*.rules /run/udev/rules.d/*.rules /usr/lib/udev/rules.d/*.rules /lib/udev/rules.d/*.rules; do
	[ -f "$f" ] || [ -c "$f" ] && set -- "$@" "$f"
done
[ $# -gt 0 ] && [ -n "$ifs" ] && ln="$ln$(awk 'BEGIN {
	for (i = 1; i < ARGC; i++) {
		b = ARGV[i]; sub(/.*\//, "", b)
		if (b in seen) continue
		seen[b] = 1
		n = 0
		while ((getline l < ARGV[i]) > 0) { n++; if (l ~ /ethtool/) print "@udev-rule " ARGV[i] ":" n " " l }
		if (n == 0) print "@udev-null " ARGV[i]
		close(ARGV[i])
	}
}' "$@")$NL"
for f in /etc/network/if-pre-up.d/ethtool /etc/network/if-up.d/ethtool; do
	[ -f "$f" ] && ln="$ln@ifupdown-hook $f$NL"
done
npersist() {
	v=''
	{ read -r v < "/sys/class/net/$1/address"; } 2>/dev/null
	t="@mac $v$NL"
	if [ -n "$nmv" ]; then
		t="$t@nm-version $nmv$NL"
		t="$t@nm-state $(nmcli -t -g GENERAL.STATE device show "$1" 2>/dev/null | head -n 1)$NL"
		t="$t@nm-connection $(nmcli -t -g GENERAL.CONNECTION device show "$1" 2>/dev/null | head -n 1)$NL"
		u=$(nmcli -t -g GENERAL.CON-UUID device show "$1" 2>/dev/null | head -n 1)
		t="$t@nm-uuid $u$NL"
		# The connection's ethtool settings ("!": nmcli could not read it).
		case "$u" in
		*[!0-9a-fA-F-]*|'') ;;
		*) for p in ring-rx ring-tx feature-tso feature-gso feature-gro feature-lro; do
			v=$(nmcli -g "ethtool.$p" connection show "$u" 2>/dev/null) || v='!'
			t="$t@nm-ethtool ${p#*-} ${v%%"$NL"*}$NL"
		done ;;
		esac
	fi
	[ -n "$ifup" ] && t="$t@ifup $ifup$NL"
	f=/etc/sysconfig/network-scripts/ifcfg-$1
	if [ -f "$f" ]; then
		t="$t@ifcfg $f$NL"
		v=$(grep -n -E '^[[:space:]]*ETHTOOL_OPTS=' "$f" 2>/dev/null | tail -n 1)
		[ -n "$v" ] && t="$t@ifcfg-opts $v$NL"
	fi
	for f in /etc/network/interfaces /etc/network/interfaces.d/*; do
		[ -f "$f" ] || continue
		n=$(I=$1 awk '{ sub(/\r$/, "") } $1 == "iface" && $2 == ENVIRON["I"] { print NR; exit }' "$f" 2>/dev/null)
		[ -n "$n" ] && t="$t@iface $n $f$NL"
		# The ethtool options of every "iface IF" stanza.
		[ -n "$n" ] && t="$t$(I=$1 awk '{ sub(/\r$/, "") }
			$1 ~ /^(iface|mapping|auto|source|source-directory|source-dir|no-auto-down|no-scripts|rename|template|allow-.*)$/ { st = ($1 == "iface" && $2 == ENVIRON["I"]); next }
			st && ($1 ~ /^(hardware-dma-ring-(rx|tx)|offload-[a-z]+)$/ || ($1 ~ /^(pre-up|up|post-up)$/ && /ethtool/)) { print "@iface-opt " FILENAME ":" NR " " $0 }' "$f" 2>/dev/null)$NL"
	done
	printf '%s%s' "$t" "$ln"
}
if ! have ethtool; then
	t=''
	for i in $ifs; do t="$t@if $i$NL"; done
	printf '%sethtool not found in PATH (install ethtool)\n' "$t"; e nics missing
else
	d0=$PWD
	for i in $ifs; do
		t="@if $i$NL"
		# The driver's name without readlink: cd -P resolves the link.
		if cd -P "/sys/class/net/$i/device/driver" 2>/dev/null; then t="$t@driver ${PWD##*/}$NL"; cd "$d0" 2>/dev/null || cd /; fi
		printf '%s@ring\n' "$t"; ethtool -g "$i" 2>&1
		# Top-level features, and the children the kernel's feature
		# dependencies are decided on (netlink-era ethtool marks only
		# children [fixed] or [requested on] in a group of several): the
		# transmit checksums, scatter-gather and the TCP segmentation bits.
		printf '@features\n'; ethtool -k "$i" 2>&1 | grep -E -e '^[^	]' -e '^	(tx-checksum-ip(v4|v6|-generic)|tx-scatter-gather|tx-tcp6?-segmentation):'
		npersist "$i"
	done
	e nics
fi

# The host section: the plain files the catalog names (FILES, each under
# /proc or /sys: "file PATH=TEXT", the lines joined by spaces, or "file
# PATH!denied", "!absent", "!unreadable"), the NUMA nodes, each gathered
# interface's MTU, and last the host's clock, as near the session's end as
# the script gets (kaudit brackets it with its own clock). The files were
# read by the first awk (hd, hf: their lines); one date, the rest builtins.
b host
printf '%s%s' "$hd" "$hf"
if [ -d /sys/devices/system/node ]; then
	n=0
	for d in /sys/devices/system/node/node[0-9]*; do [ -d "$d" ] && n=$((n + 1)); done
	echo "numa-nodes $n"
else echo "numa-nodes !absent /sys/devices/system/node"; fi
for i in $ifs; do rv "/sys/class/net/$i/mtu"; echo "mtu $i $v"; done
echo "clock $(date +%s.%N 2>/dev/null)"
e host

# The time service's state (timesync; parse/timesync.go reads it): chronyd,
# ntpd or systemd-timesyncd, whichever answers first. Each query runs only
# when its tool exists and is bounded by timeout(1); timesyncd's state is a
# file test. timedatectl (the kernel's sync flag, through timedated) only
# on a host booted with systemd (/run/systemd/system, as sd_booted tests)
# and when neither daemon answered: chronyd without rtcsync leaves that
# flag unsynchronised however well it keeps time.
b timesync
if have timeout; then
	ts=''
	if have chronyc; then
		t=$(timeout 2 chronyc -n tracking 2>&1); printf '@chronyc %s\n%s\n' "$?" "$t"
		case $t in *"Leap status"*) ts=1 ;; esac
	fi
	if [ -z "$ts" ] && have ntpq; then
		t=$(timeout 2 ntpq -n -c rv 2>&1); printf '@ntpq %s\n%s\n' "$?" "$t"
		case $t in *leap=*|*associd=*) ts=1 ;; esac
	fi
	if [ -z "$ts" ] && [ -e /run/systemd/timesync/synchronized ]; then echo "@timesyncd synchronized"; ts=1; fi
	if [ -z "$ts" ] && [ -d /run/systemd/system ] && have timedatectl; then
		t=$(timeout 2 timedatectl show -p NTP -p NTPSynchronized 2>&1); printf '@timedatectl %s\n%s\n' "$?" "$t"
	fi
	e timesync
else
	echo "timeout not found in PATH (install coreutils)"; e timesync missing
fi

# The conntrack table's per-CPU counters (conntrack-stat), where the
# nf_conntrack module is loaded: one line per possible CPU, read with the
# shell's read up to 48 CPUs (a byte a read: cheaper than starting cat
# below that), with cat above.
b conntrack-stat
f=/proc/net/stat/nf_conntrack
if [ -r "$f" ]; then
	n=48
	[ -r /sys/devices/system/cpu/possible ] && read -r n < /sys/devices/system/cpu/possible
	n=${n##*[-,]}; case $n in ''|*[!0-9]*) n=48 ;; esac
	if [ "$n" -lt 48 ]; then rv "$f"; printf '%s\n' "$v"; else cat "$f" 2>&1; fi
	e conntrack-stat
elif [ -e "$f" ]; then e conntrack-stat denied
else e conntrack-stat absent; fi

# Reverse DNS (rdns), only when the broker's listeners or its protocol
# map name a SASL protocol: a SASL handshake resolves addresses back to
# names (KAFKA-8562). The host's own address (RDNS_SELF) and its peers'
# (RDNS_PEERS, from kaudit's inventory) are resolved back as the host's
# resolver sees them, with getent hosts bounded by timeout(1) and timed by
# /proc/uptime (builtins). Fork-light: the names are resolved forward by
# one getent, the addresses back by one more; only when that batch took
# over a second (or did not end) is each address looked up alone, to tell
# which is slow, the rest skipped past 5 s in all; an address the batch
# did not answer is looked up alone too (its own exit status says
# whether it has no name). parse/rdns.go reads the lines.
# rline KEY ip|name TEXT: l = TEXT's getent line whose address (ip) or
# one of whose names (name) is KEY; "" when none.
rline() {
	k=$1 md=$2 tx=$3 l=''
	o=$IFS; IFS=$NL; set -f
	for x in $tx; do
		IFS=' 	'
		# shellcheck disable=SC2086 # split the line into its fields
		set -- $x
		if [ "$md" = ip ]; then [ "$1" = "$k" ] && { l=$x; break; }
		else shift; for w in "$@"; do [ "$w" = "$k" ] && { l=$x; break 2; }; done; fi
		IFS=$NL
	done
	IFS=$o; set +f
}
# cs: c = /proc/uptime in centiseconds (0 when unreadable).
cs() {
	read -r u _ < /proc/uptime; c=${u%.*}${u#*.}; c=${c#"${c%%[!0]*}"}
	case $c in ''|*[!0-9]*) c=0 ;; esac
}
# rmap KIND ADDR: the address ADDR stands for, appended to rl ("KIND ADDR
# IP" lines) and ips; a name that does not resolve is printed as such.
rmap() {
	ip=$2
	case $2 in
	*:*|*[!0-9.]*)
		case $2 in *:*) ;; *)
			rline "$2" name "$fw"; ip=${l%%[!0-9A-Fa-f:.]*}
			if [ -z "$ip" ]; then g=$(timeout 2 getent hosts "$2" 2>/dev/null); ip=${g%%[!0-9A-Fa-f:.]*}; fi ;;
		esac ;;
	esac
	if [ -z "$ip" ]; then printf 'ptr %s %s !unresolved\n' "$1" "$2"; return; fi
	rl="$rl$1 $2 $ip$NL"; ips="$ips $ip"
}
# rone KIND ADDR IP: one address resolved back alone, timed.
rone() {
	cs; if [ $((c - c00)) -ge 500 ]; then printf 'ptr %s %s !skipped\n' "$1" "$2"; return; fi
	read -r u0 _ < /proc/uptime
	g=$(timeout 2 getent hosts "$3" 2>/dev/null); rc=$?
	read -r u1 _ < /proc/uptime
	printf 'ptr %s %s %s %s %s %s %s\n' "$1" "$2" "$3" "$rc" "$u0" "$u1" "${g%%"$NL"*}"
}
b rdns
case "$kc$NL$kargs" in
*[Ss][Aa][Ss][Ll]_*)
	if have getent && have timeout; then
		cs; c00=$c
		fw='' rl='' ips='' names=''
		for a in $RDNS_SELF $RDNS_PEERS; do case $a in *:*) ;; *[!0-9.]*) names="$names $a" ;; esac; done
		set -f
		# shellcheck disable=SC2086 # names and addresses are kaudit's, validated: one word each
		[ -n "$names" ] && fw=$(timeout 2 getent hosts $names 2>/dev/null)
		for a in $RDNS_SELF; do rmap self "$a"; done
		for a in $RDNS_PEERS; do rmap peer "$a"; done
		if [ -n "$ips" ]; then
			read -r b0 _ < /proc/uptime; cs; c0=$c
			# shellcheck disable=SC2086
			bk=$(timeout 3 getent hosts $ips 2>/dev/null); brc=$?
			read -r b1 _ < /proc/uptime; cs
			slow=''; if [ "$brc" -eq 124 ] || [ $((c - c0)) -gt 100 ]; then slow=1; fi
			o=$IFS; IFS=$NL
			for x in $rl; do
				IFS=' '
				# shellcheck disable=SC2086
				set -- $x
				if [ -z "$slow" ]; then
					rline "$3" ip "$bk"
					if [ -n "$l" ]; then printf 'ptr %s %s %s 0 %s %s %s\n' "$1" "$2" "$3" "$b0" "$b1" "$l"
					else rone "$1" "$2" "$3"; fi
				else rone "$1" "$2" "$3"; fi
				IFS=$NL
			done
			IFS=$o
		fi
		set +f
		e rdns
	else
		echo "getent or timeout not found in PATH (install libc-bin, coreutils)"; e rdns missing
	fi ;;
*) echo "no SASL listener named in the broker's configuration"; e rdns absent ;;
esac

b evidence
if have dmesg; then
	dmesg 2>&1 | awk '/SYN flooding|Operation not permitted|Permission denied|read kernel buffer failed/ { l[n++ % 21] = $0 }
		END { for (i = (n > 21 ? n - 21 : 0); i < n; i++) print l[i % 21] }'
	e evidence
else
	e evidence missing
fi
printf '%s done\n' "$M"
