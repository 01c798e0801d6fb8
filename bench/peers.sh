#!/usr/bin/env bash
# Peer benchmark: kaudit against the agentless tools people already use,
# on one real OpenSSH sshd answering on N addresses, everything inside a
# network namespace this script creates (no traffic leaves it).
#
#   sudo bench/peers.sh                      # N = 50 200 500, 1 round: ≈ 11 min on 2 idle cores
#   sudo bench/peers.sh -r 3                 # medians of 3 (≈ 32 min idle; 58 min on a loaded box)
#   sudo bench/peers.sh -n "50 200" -r 5 -o /tmp/peers
#   sudo bench/peers.sh -n 500 -c 200 -t "kaudit bareloop" -m default -P
#
# -P runs sshd in its own PID namespace with its own /proc: every session
# sees the farm's processes only, as on a host of its own, not this
# machine's other jobs (a script that reads /proc/*/cmdline or ss -p's
# walk of every descriptor otherwise pays for whatever else runs here).
#
# Tools, each driving the same sshd with concurrency 32, host keys checked:
#   kaudit     kaudit scan INVENTORY -f json -o r.json (gather, parse, rules, report)
#   bareloop   bench/bareloop: x/crypto/ssh, one session running `cat /proc/…; ss -ltn`
#              and discarding the output: the floor of an agentless Go client
#   pssh       parallel-ssh -i, running kaudit's gather script
#   pdsh       pdsh -R ssh, same script
#   clush      ClusterShell clush, same script
#   ansible    ansible all -m raw, same script (only up to -a N hosts: it is slow)
# The peers run the script from a file on the host (no upload: a slight
# advantage to them); kaudit sends it on stdin as it always does.
#
# Measured per run: wall; client CPU = user+sys of the tool's whole process
# tree (/usr/bin/time: every ssh child is waited for; ControlMaster is off
# so no daemonised ssh escapes); sshd CPU = the sshd master's own and
# reaped children's CPU (/proc/PID/stat: every session, shell and command
# of the run); failures = hosts without a complete result. Rounds
# interleave the tools (the order rotates each round); two key-exchange
# modes: "default" (sshd's defaults: OpenSSH clients negotiate
# sntrup761x25519-sha512, x/crypto curve25519-sha256) and
# "curve25519" (sshd offers only curve25519-sha256: equal key exchange).
# Results: OUT/results.tsv (one line per run), OUT/table.md (medians and
# per-round ratios, printed), OUT/client-cpu.svg (client CPU per host vs N).
#
# Needs root (network namespace, bind mounts); installs openssh-server,
# pssh, pdsh, clustershell and ansible-core with apt-get when missing
# (services are not started: policy-rc.d). Server sessions run as user
# "kbench" (uid 0, shell /bin/sh, empty HOME in the work dir) through a
# private /etc/passwd bind-mounted in sshd's own mount namespace: no shell
# init file runs, nothing on the machine is changed. Everything is removed
# on exit (trap), also on Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin:/usr/sbin:/sbin"

NS_LIST="50 200 500"
ROUNDS=1
OUT=""
ANSIBLE_MAX=200
MODES="default curve25519"
TOOLS="kaudit bareloop pssh pdsh clush ansible"
CONC=32
PIDNS=""
while getopts "n:r:o:a:m:t:c:Ph" opt; do
	case $opt in
	n) NS_LIST=$OPTARG ;;
	r) ROUNDS=$OPTARG ;;
	o) OUT=$OPTARG ;;
	a) ANSIBLE_MAX=$OPTARG ;;
	m) MODES=$OPTARG ;;
	t) TOOLS=$OPTARG ;;
	c) CONC=$OPTARG ;;
	P) PIDNS="-p -f --mount-proc" ;;
	*) sed -n '2,35p' "$0"; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "peers.sh: needs root (network namespace)" >&2; exit 2; }
MAXN=0
for n in $NS_LIST; do
	case $n in *[!0-9]* | "") echo "peers.sh: -n takes host counts, got $n" >&2; exit 2 ;; esac
	[ "$n" -ge 1 ] && [ "$n" -le 60000 ] || { echo "peers.sh: N must be 1..60000" >&2; exit 2; }
	[ "$n" -gt "$MAXN" ] && MAXN=$n
done

# One run at a time: a second would delete the first one's namespace, and
# two at once would skew each other's CPU figures anyway.
exec 9>/tmp/kbench-peers.lock
if ! flock -n 9; then
	echo "peers.sh: another run holds /tmp/kbench-peers.lock: waiting for it" >&2
	flock 9
fi
NS=kbench-peers
WORK=$(mktemp -d /tmp/kbench-peers.XXXXXX)
OUT=${OUT:-$WORK/out}
mkdir -p "$OUT"
SSHD_PID=""
SSHD_JOB=""
cleanup() {
	set +e
	if [ -n "$SSHD_PID" ] && kill -0 "$SSHD_PID" 2>/dev/null; then
		kill "$SSHD_PID"
		for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$SSHD_PID" 2>/dev/null || break; sleep 0.2; done
	fi
	ip netns pids "$NS" 2>/dev/null | while read -r p; do kill "$p" 2>/dev/null; done
	ip netns del "$NS" 2>/dev/null
	case $OUT in "$WORK"/*) cp -r "$OUT" "/tmp/kbench-peers-last" 2>/dev/null; echo "results kept in /tmp/kbench-peers-last" ;; esac
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

install_tools() {
	local missing=""
	command -v /usr/sbin/sshd >/dev/null || missing="$missing openssh-server"
	wants() { case " $TOOLS " in *" $1 "*) return 0 ;; esac; return 1; } # only the tools of -t
	wants pssh && { command -v parallel-ssh >/dev/null || missing="$missing pssh"; }
	wants pdsh && { command -v pdsh >/dev/null || missing="$missing pdsh"; }
	wants clush && { command -v clush >/dev/null || missing="$missing clustershell"; }
	wants ansible && { command -v ansible >/dev/null || missing="$missing ansible-core"; }
	[ -x /usr/bin/time ] || missing="$missing time"
	[ -z "$missing" ] && return
	for p in $missing; do
		apt-cache policy "$p" | grep -q 'Candidate: [0-9]' || { echo "peers.sh: $p is not available from apt (apt-get update?)" >&2; exit 2; }
	done
	echo "installing:$missing"
	local policy=""
	if [ ! -e /usr/sbin/policy-rc.d ]; then # never start the distribution's sshd
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && policy=1
	fi
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
	[ -n "$policy" ] && rm -f /usr/sbin/policy-rc.d
	return 0
}

addr() { echo "10.213.$(($1 / 250)).$(($1 % 250 + 1))"; }

setup_files() {
	go build -o "$WORK/kaudit" ./cmd/kaudit
	go build -o "$WORK/bareloop" ./bench/bareloop
	go build -o "$WORK/peerplot" ./bench/peerplot
	"$WORK/bareloop" -print-script >"$WORK/gather.sh"
	ssh-keygen -q -t ed25519 -N '' -f "$WORK/ssh_host_ed25519_key"
	ssh-keygen -q -t ed25519 -N '' -f "$WORK/id_ed25519"
	cp "$WORK/id_ed25519.pub" "$WORK/authorized_keys"
	mkdir -m 0700 "$WORK/home" "$WORK/ansible"
	cp /etc/passwd "$WORK/passwd"
	echo "kbench:x:0:0:kaudit peer bench:$WORK/home:/bin/sh" >>"$WORK/passwd"
	local hk i a
	hk=$(cut -d' ' -f1,2 "$WORK/ssh_host_ed25519_key.pub")
	: >"$WORK/known_hosts"
	: >"$WORK/hosts-all"
	for ((i = 0; i < MAXN; i++)); do
		a=$(addr $i)
		echo "$a $hk" >>"$WORK/known_hosts"
		echo "$a" >>"$WORK/hosts-all"
	done
	cat >"$WORK/ssh_config" <<EOF
Host *
  User kbench
  IdentityFile $WORK/id_ed25519
  IdentitiesOnly yes
  UserKnownHostsFile $WORK/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  HostKeyAlgorithms ssh-ed25519
  BatchMode yes
  ControlMaster no
  ControlPath none
  ConnectTimeout 30
  ForwardAgent no
  ForwardX11 no
  UpdateHostKeys no
  LogLevel ERROR
EOF
	cat >"$WORK/ansible.cfg" <<EOF
[defaults]
host_key_checking = True
gathering = explicit
forks = $CONC
timeout = 30
interpreter_python = /usr/bin/python3
[ssh_connection]
ssh_args = -F $WORK/ssh_config
retries = 0
pipelining = False
usetty = False
EOF
}

# hosts_for N: the first N addresses, as each tool wants them.
hosts_for() {
	local n=$1 d="$WORK/n$1"
	mkdir -p "$d"
	head -n "$n" "$WORK/hosts-all" >"$d/hosts.txt"
	{ echo "[all]"; cat "$d/hosts.txt"; } >"$d/inventory.ini"
	{
		printf 'defaults:\n  user: kbench\n  use_agent: false\n  identity_files: [%s]\n' "$WORK/id_ed25519"
		printf '  known_hosts: [%s]\n  host_key_policy: strict\n  become: ""\n  connect_timeout: 30s\n  timeout: 120s\nhosts:\n' "$WORK/known_hosts"
		awk '{ printf "  h%05d: {address: %s}\n", NR, $1 }' "$d/hosts.txt"
	} >"$d/inventory.yaml"
}

start_sshd() { # mode
	[ -n "$SSHD_PID" ] && { kill "$SSHD_PID"; wait "$SSHD_JOB" 2>/dev/null || true; SSHD_PID=""; }
	local kex=""
	[ "$1" = curve25519 ] && kex="KexAlgorithms curve25519-sha256"
	cat >"$WORK/sshd_config" <<EOF
Port 22
ListenAddress 0.0.0.0
HostKey $WORK/ssh_host_ed25519_key
PidFile none
AuthorizedKeysFile $WORK/authorized_keys
UsePAM no
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitTTY no
PrintMotd no
PrintLastLog no
UseDNS no
StrictModes no
MaxStartups 2000
MaxSessions 10
LoginGraceTime 120
X11Forwarding no
AllowTcpForwarding no
LogLevel ERROR
$kex
EOF
	# Own mount namespace: the private passwd (user kbench) and tmpfs on
	# /run (sshd's privsep dir) and /var/log are seen by sshd and its
	# sessions only (with -P also its own PID namespace and /proc).
	# shellcheck disable=SC2086 # PIDNS is a list of options
	ip netns exec "$NS" unshare -m --propagation private $PIDNS sh -c "
		mount --bind '$WORK/passwd' /etc/passwd &&
		mount -t tmpfs kbench-run /run && mkdir -p /run/sshd &&
		mount -t tmpfs kbench-log /var/log &&
		exec /usr/sbin/sshd -D -e -f '$WORK/sshd_config'" 2>>"$WORK/sshd.log" &
	SSHD_JOB=$!
	SSHD_PID=$SSHD_JOB
	local a
	a=$(addr 0)
	for _ in $(seq 100); do
		if ip netns exec "$NS" bash -c "exec 3<>/dev/tcp/$a/22" 2>/dev/null; then
			# -P: unshare forks; sshd (PID 1 inside) is its child.
			[ -n "$PIDNS" ] && SSHD_PID=$(pgrep -P "$SSHD_JOB")
			return 0
		fi
		sleep 0.1
	done
	echo "peers.sh: sshd did not start:" >&2
	cat "$WORK/sshd.log" >&2
	exit 1
}

setup_netns() {
	ip netns del "$NS" 2>/dev/null || true
	ip netns add "$NS"
	ip -n "$NS" link set lo up
	local i
	for ((i = 0; i < MAXN; i++)); do echo "address add $(addr $i)/32 dev lo"; done | ip -n "$NS" -batch -
}

# sshd_ticks: CPU clock ticks of sshd and every child it has reaped
# (ip netns exec, unshare and sh all exec: $SSHD_PID is sshd itself;
# with -P, unshare's one child).
sshd_ticks() { awk '{ print $14 + $15 + $16 + $17 }' "/proc/$SSHD_PID/stat"; }

# wait_idle: until sshd has no session children left (all reaped).
wait_idle() {
	for _ in $(seq 100); do
		[ -z "$(pgrep -P "$SSHD_PID")" ] && return
		sleep 0.1
	done
}

CMD="/bin/sh $WORK/gather.sh; echo KBENCH-OK"

# run_tool TOOL N OUTFILE: runs it inside the namespace under /usr/bin/time.
run_tool() {
	local tool=$1 n=$2 d="$WORK/n$2" o=$3
	local t=(ip netns exec "$NS" /usr/bin/time -f "%e %U %S" -o "$o.time")
	case $tool in
	kaudit) "${t[@]}" "$WORK/kaudit" scan "$d/inventory.yaml" -c "$CONC" -f json -o "$o.json" >"$o" 2>&1 ;;
	bareloop) "${t[@]}" "$WORK/bareloop" -hosts "$d/hosts.txt" -user kbench -key "$WORK/id_ed25519" \
		-known-hosts "$WORK/known_hosts" -c "$CONC" >"$o" 2>&1 ;;
	pssh) "${t[@]}" parallel-ssh -h "$d/hosts.txt" -p "$CONC" -t 120 -i -x "-F $WORK/ssh_config" "$CMD" >"$o" 2>&1 ;;
	pdsh) PDSH_SSH_ARGS="-F $WORK/ssh_config -x -a -l%u %h" "${t[@]}" pdsh -R ssh -f "$CONC" -t 30 -u 120 \
		-l kbench -w "^$d/hosts.txt" "$CMD" >"$o" 2>&1 ;;
	clush) "${t[@]}" clush -f "$CONC" --hostfile "$d/hosts.txt" -l kbench -o "-F $WORK/ssh_config" -t 30 -u 120 "$CMD" >"$o" 2>&1 ;;
	ansible) ANSIBLE_CONFIG="$WORK/ansible.cfg" ANSIBLE_HOME="$WORK/ansible" ANSIBLE_LOCAL_TEMP="$WORK/ansible/tmp" \
		"${t[@]}" ansible all -i "$d/inventory.ini" -m raw -a "$CMD" -f "$CONC" >"$o" 2>&1 ;;
	esac
}

# ok_count TOOL OUTFILE: hosts with a complete result.
ok_count() {
	case $1 in
	kaudit) [ -s "$2.json" ] && grep -c '^      "error": null' "$2.json" || echo 0 ;;
	bareloop) awk '/^ok /{ print $2; f=1 } END { if (!f) print 0 }' "$2" ;;
	*) grep -c 'KBENCH-OK$' "$2" || true ;;
	esac
}

main() {
	install_tools
	setup_files
	setup_netns
	for n in $NS_LIST; do hosts_for "$n"; done
	local tck
	tck=$(getconf CLK_TCK)
	printf 'mode\tn\tround\ttool\twall_s\tuser_s\tsys_s\tsshd_s\tok\tfailed\n' >"$OUT/results.tsv"
	local mode r n tool i t0 t1 o ok tools
	read -r -a tools <<<"$TOOLS"
	for mode in $MODES; do
		start_sshd "$mode"
		for ((r = 1; r <= ROUNDS; r++)); do
			for n in $NS_LIST; do
				for ((i = 0; i < ${#tools[@]}; i++)); do # rotate the order each round
					tool=${tools[$(((i + r) % ${#tools[@]}))]}
					[ "$tool" = ansible ] && [ "$n" -gt "$ANSIBLE_MAX" ] && continue
					o="$WORK/run-$mode-$n-$r-$tool"
					wait_idle
					t0=$(sshd_ticks)
					run_tool "$tool" "$n" "$o" || true
					wait_idle
					t1=$(sshd_ticks)
					ok=$(ok_count "$tool" "$o")
					[ "$ok" -lt "$n" ] && cp "$o" "$OUT/failed-$mode-$n-$r-$tool.log" # what went wrong
					read -r wall user sys <"$o.time" || { wall=0 user=0 sys=0; }
					case $wall in *[!0-9.]*) read -r wall user sys < <(tail -1 "$o.time") ;; esac # "Command exited with …" first
					printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$mode" "$n" "$r" "$tool" "$wall" "$user" "$sys" \
						"$(awk -v a="$t0" -v b="$t1" -v t="$tck" 'BEGIN { printf "%.2f", (b - a) / t }')" "$ok" "$((n - ok))" | tee -a "$OUT/results.tsv"
				done
			done
		done
	done
	"$WORK/peerplot" -svg "$OUT/client-cpu.svg" "$OUT/results.tsv" | tee "$OUT/table.md"
	echo "wrote $OUT/results.tsv $OUT/table.md $OUT/client-cpu.svg"
}
main
