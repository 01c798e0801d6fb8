//go:build e2e

package testfleet

import (
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func noLeftoversAfter(t *testing.T) {
	// Registered before Start: cleanups run last-in first-out, so this runs
	// after the fleet's teardown.
	t.Cleanup(func() {
		for _, ns := range listNetns() {
			if strings.HasPrefix(ns, nsPrefix) {
				t.Errorf("netns %s left behind", ns)
			}
		}
		if l := listLinks(linkPrefix); len(l) > 0 {
			t.Errorf("links left behind: %v", l)
		}
	})
}

func nstat(t *testing.T, h *Host, name string) int64 {
	t.Helper()
	for _, line := range strings.Split(h.Exec(t, "nstat", "-az", name), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == name {
			n, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				t.Fatalf("nstat %s: %q", name, line)
			}
			return n
		}
	}
	t.Fatalf("%s: nstat has no %s", h.Spec.Name, name)
	return 0
}

// sendQ returns Send-Q of the LISTEN socket on port, from ss inside the host.
func sendQ(t *testing.T, h *Host, port int) int {
	t.Helper()
	out := h.Exec(t, "ss", "-ltn")
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 && f[0] == "LISTEN" && strings.HasSuffix(f[3], ":"+strconv.Itoa(port)) {
			n, _ := strconv.Atoi(f[2])
			return n
		}
	}
	t.Fatalf("%s: no listener on %d in:\n%s", h.Spec.Name, port, out)
	return 0
}

func TestFleetSelfTest(t *testing.T) {
	noLeftoversAfter(t)
	specs := []HostSpec{
		{
			Name:    "h1",
			Sysctls: map[string]string{"net.ipv4.tcp_syncookies": "1", "net.core.somaxconn": "128"},
			Kafka: &BrokerSpec{Version: "2.8.1",
				Properties: map[string]string{"socket.listen.backlog.size": "2048"}}, // ignored before 3.2
			SysctlFiles: map[string]string{
				"60-kafka.conf":    "net.core.somaxconn = 4096\n",
				"/etc/sysctl.conf": "net.ipv4.tcp_syncookies = 0\n",
			},
		},
		{
			Name:    "h2",
			Sysctls: map[string]string{"net.ipv4.tcp_syncookies": "0", "net.core.somaxconn": "4096", "net.ipv4.tcp_max_syn_backlog": "8192"},
			Kafka:   &BrokerSpec{Version: "3.6.1", Properties: map[string]string{"socket.listen.backlog.size": "2048"}},
		},
		{
			Name:      "h3",
			Sysctls:   map[string]string{"net.ipv4.tcp_syncookies": "2", "net.core.somaxconn": "1024"},
			Kafka:     &BrokerSpec{Version: "7.1.0", Confluent: true},
			NoEthtool: true, NoSS: true,
			ProcFiles: map[string]string{"/proc/version": "Linux version 4.19.0-12-amd64 (debian-kernel@lists.debian.org) #1 SMP Debian 4.19.152-1 (2020-10-18)\n"},
		},
	}
	t0 := time.Now()
	f := Start(t, specs)
	t.Logf("TIMING fleet start, 3 hosts: %v", time.Since(t0).Round(time.Millisecond))
	h1, h2, h3 := f.Host("h1"), f.Host("h2"), f.Host("h3")

	t.Run("ssh-sees-own-sysctls", func(t *testing.T) {
		want := map[string][2]string{"h1": {"128", "1"}, "h2": {"4096", "0"}, "h3": {"1024", "2"}}
		for _, h := range f.Hosts {
			// The exact command of the brief, with the real OpenSSH client.
			cmd := exec.Command("ssh", "-F", "/dev/null", "-i", f.IdentityFile, "-o", "UserKnownHostsFile="+f.KnownHosts,
				"-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes", "root@"+h.Addr,
				"cat /proc/sys/net/core/somaxconn /proc/sys/net/ipv4/tcp_syncookies; hostname; echo $HOME $SHELL")
			cmd.Env = []string{stdPath, "HOME=" + f.clientHome}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: ssh: %v: %s", h.Spec.Name, err, out)
			}
			lines := strings.Fields(string(out))
			w := want[h.Spec.Name]
			if len(lines) < 5 || lines[0] != w[0] || lines[1] != w[1] || lines[2] != h.Spec.Name || lines[3] != h.Home || lines[4] != "/bin/sh" {
				t.Errorf("%s: got %q, want somaxconn %s syncookies %s hostname %s HOME %s SHELL /bin/sh", h.Spec.Name, out, w[0], w[1], h.Spec.Name, h.Home)
			}
			if got := strings.TrimSpace(h.Exec(t, "sysctl", "-n", "net.core.somaxconn")); got != w[0] {
				t.Errorf("%s: Exec sysctl somaxconn = %s, want %s", h.Spec.Name, got, w[0])
			}
		}
		if own, _ := os.ReadFile("/proc/sys/net/core/somaxconn"); strings.TrimSpace(string(own)) == "128" {
			t.Logf("note: the machine's own somaxconn is 128 too")
		}
	})

	t.Run("listen-backlog", func(t *testing.T) {
		for _, c := range []struct {
			h    *Host
			want int
		}{{h1, 50}, {h2, 2048}} {
			if got := sendQ(t, c.h, 9092); got != c.want {
				t.Errorf("%s: ss Send-Q %d, want %d", c.h.Spec.Name, got, c.want)
			}
		}
		// h3 hides ss: ground truth through the machine's ss in h3's netns.
		out := h3.ExecNet(t, "ss", "-Hltn", "sport = :9092")
		if f := strings.Fields(out); len(f) < 4 || f[2] != "50" || f[3] != "*:9092" {
			t.Errorf("h3: ss (net only) %q, want Send-Q 50 on *:9092", out)
		}
		if out := h1.SSH(t, "ss -ltn"); !strings.Contains(out, "*:9092") {
			t.Errorf("h1: ssh ss -ltn lacks *:9092:\n%s", out)
		}
	})

	t.Run("process-and-layout", func(t *testing.T) {
		// Each host sees only its own broker (own PID namespace and /proc).
		for _, c := range []struct {
			h   *Host
			jar string
		}{
			{h1, "/opt/kafka_2.13-2.8.1/bin/../libs/kafka_2.13-2.8.1.jar"},
			{h2, "/opt/kafka_2.13-3.6.1/bin/../libs/kafka_2.13-3.6.1.jar"},
			{h3, "/usr/bin/../share/java/kafka/*"},
		} {
			out := c.h.SSH(t, "pgrep -a java")
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(lines) != 1 || !strings.Contains(out, c.jar) || !strings.Contains(out, " kafka.Kafka "+c.h.KafkaConfig) {
				t.Errorf("%s: pgrep -a java = %q", c.h.Spec.Name, out)
			}
			pid := strings.Fields(lines[0])[0]
			cl := c.h.SSH(t, "tr '\\0' '\\n' < /proc/"+pid+"/cmdline | head -1; cat "+c.h.KafkaConfig+" | grep -c =; ls "+c.h.KafkaJarDir)
			if !strings.HasPrefix(cl, FakeJavaPath+"\n") || !strings.Contains(cl, "kafka-clients-") {
				t.Errorf("%s: cmdline/layout: %q", c.h.Spec.Name, cl)
			}
		}
		if out := h3.SSH(t, "ls /usr/share/java/kafka; grep -h 'Kafka version' /var/log/kafka/server.log"); !strings.Contains(out, "kafka_2.13-7.1.0-ccs.jar") || !strings.Contains(out, "Kafka version: 7.1.0-ccs") {
			t.Errorf("h3 layout: %q", out)
		}
		if out := h2.SSH(t, "grep -h 'socket.listen.backlog.size' /opt/kafka_2.13-3.6.1/logs/server.log"); !strings.Contains(out, "= 2048") {
			t.Errorf("h2 log: %q", out)
		}
		if out := h1.SSH(t, "cat /etc/sysctl.d/60-kafka.conf /etc/sysctl.conf; ls /etc/sysctl.d /usr/lib/sysctl.d | wc -l"); !strings.Contains(out, "somaxconn = 4096") || !strings.Contains(out, "tcp_syncookies = 0") {
			t.Errorf("h1 sysctl files: %q", out)
		}
		if out := h3.SSH(t, "cat /proc/version; ls /etc/sysctl.d | wc -l"); !strings.Contains(out, "Debian 4.19.152-1") || !strings.HasSuffix(out, "0\n") {
			t.Errorf("h3 /proc/version / empty sysctl.d: %q", out)
		}
	})

	t.Run("hidden-tools", func(t *testing.T) {
		if _, err := h3.SSHErr("command -v ethtool"); err == nil {
			t.Errorf("h3: ethtool visible")
		}
		if _, err := h3.SSHErr("command -v ss || ls /sbin/ss /usr/sbin/ss /bin/ss"); err == nil {
			t.Errorf("h3: ss visible")
		}
		if out := h1.SSH(t, "command -v ethtool; command -v ss"); !strings.Contains(out, "ethtool") || !strings.Contains(out, "ss") {
			t.Errorf("h1: tools missing: %q", out)
		}
		out, err := h1.SSHErr("ethtool -g eth0; ethtool -k eth0 | head -3")
		t.Logf("ethtool on a veth: err=%v\n%s", err, out)
	})

	t.Run("private-files", func(t *testing.T) {
		const name = "99-kft-selftest.conf"
		h1.SSH(t, "echo net.core.somaxconn=1 > /etc/sysctl.d/"+name+" && mkdir -p /var/lib/kaudit && echo x > /var/lib/kaudit/state && echo y > /tmp/kft-x && echo z > /root/kft-x")
		for _, p := range []string{"/etc/sysctl.d/" + name, "/var/lib/kaudit/state", "/tmp/kft-x", "/root/kft-x"} {
			if _, err := os.Stat(p); err == nil {
				t.Errorf("%s written on h1 is visible on the real machine", p)
			}
		}
		if out, err := h2.SSHErr("cat /etc/sysctl.d/" + name); err == nil {
			t.Errorf("h2 sees h1's file: %q", out)
		}
		if got := h1.Exec(t, "cat", "/etc/sysctl.d/"+name); got != "net.core.somaxconn=1\n" {
			t.Errorf("h1 Exec cat = %q", got)
		}
		if _, err := os.Stat("/etc/udev/rules.d"); err != nil {
			h1.SSH(t, "ls -d /etc/udev/rules.d && touch /etc/udev/rules.d/70-kft.rules")
		}
	})

	t.Run("accept-queue-overflow", func(t *testing.T) {
		before := map[string]int64{}
		for _, h := range f.Hosts {
			before[h.Spec.Name] = nstat(t, h, "TcpExtListenOverflows")
		}
		start := time.Now()
		h1.OverflowAcceptQueue(t)
		t.Logf("TIMING OverflowAcceptQueue(backlog 50): %v", time.Since(start).Round(time.Millisecond))
		for _, h := range f.Hosts {
			got := nstat(t, h, "TcpExtListenOverflows")
			if h == h1 && got <= before["h1"] {
				t.Errorf("h1: ListenOverflows %d, want > %d", got, before["h1"])
			}
			if h != h1 && got != before[h.Spec.Name] {
				t.Errorf("%s: ListenOverflows changed %d -> %d", h.Spec.Name, before[h.Spec.Name], got)
			}
		}
		// The broker accepts again afterwards.
		time.Sleep(100 * time.Millisecond)
		if r, _ := h1.listenQueue(t); r > 5 {
			t.Errorf("h1: accept queue still %d after resume", r)
		}
	})

	t.Run("syncookies", func(t *testing.T) {
		if got := nstat(t, h2, "TcpExtSyncookiesSent"); got != 0 {
			t.Errorf("h2 (syncookies=0): SyncookiesSent %d", got)
		}
		h3.SendCookies(t)
		if got := nstat(t, h3, "TcpExtSyncookiesSent"); got <= 0 {
			t.Errorf("h3: SyncookiesSent %d", got)
		}
		if got := nstat(t, h2, "TcpExtSyncookiesSent"); got != 0 {
			t.Errorf("h2: SyncookiesSent %d after SendCookies on h3", got)
		}
	})

	t.Run("ssh-latency", func(t *testing.T) {
		const n = 10
		var d []time.Duration
		for range n {
			s := time.Now()
			h2.SSH(t, "true")
			d = append(d, time.Since(s))
		}
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		var sum time.Duration
		for _, x := range d {
			sum += x
		}
		t.Logf("TIMING ssh session (new connection each, OpenSSH client, 'true'): min %v median %v max %v mean %v",
			d[0].Round(time.Millisecond), d[n/2].Round(time.Millisecond), d[n-1].Round(time.Millisecond), (sum / n).Round(time.Millisecond))
	})

	t.Run("inventory", func(t *testing.T) {
		p := f.Inventory(t)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range f.Hosts {
			if !strings.Contains(string(b), fmt.Sprintf("  %s: {address: %s, port: 22}", h.Spec.Name, h.Addr)) {
				t.Errorf("inventory lacks %s:\n%s", h.Spec.Name, b)
			}
		}
		t.Logf("inventory:\n%s", b)
	})

	t.Run("kill-sshd", func(t *testing.T) {
		h2.KillSSHD(t)
		if _, err := h2.SSHErr("true"); err == nil {
			t.Errorf("h2: ssh works after KillSSHD")
		}
		if r, _ := h2.listenQueue(t); r < 0 { // broker still listening (listenQueue fails otherwise)
			t.Errorf("h2 broker gone")
		}
		h1.SSH(t, "true")
	})
}

// TestFleetSelfTestScale8 measures the start time of an 8-host fleet.
func TestFleetSelfTestScale8(t *testing.T) {
	noLeftoversAfter(t)
	var specs []HostSpec
	for i := range 8 {
		s := HostSpec{Name: fmt.Sprintf("s%d", i), Sysctls: map[string]string{"net.core.somaxconn": strconv.Itoa(1000 + i)}}
		if i%2 == 0 {
			s.Kafka = &BrokerSpec{Version: "3.6.1"}
		}
		specs = append(specs, s)
	}
	t0 := time.Now()
	f := Start(t, specs)
	t.Logf("TIMING fleet start, 8 hosts: %v", time.Since(t0).Round(time.Millisecond))
	for i, h := range f.Hosts {
		if got := strings.TrimSpace(h.SSH(t, "cat /proc/sys/net/core/somaxconn")); got != strconv.Itoa(1000+i) {
			t.Errorf("%s: somaxconn %s", h.Spec.Name, got)
		}
	}
	t1 := time.Now()
	done := make(chan error, len(f.Hosts))
	for _, h := range f.Hosts {
		go func() { _, err := h.SSHErr("true"); done <- err }()
	}
	for range f.Hosts {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
	t.Logf("TIMING 8 parallel ssh sessions: %v", time.Since(t1).Round(time.Millisecond))
}

// TestFleetUsersAndKillAll checks the extra login users (own shell) and
// KillSSHDAll cutting off a session in progress.
func TestFleetUsersAndKillAll(t *testing.T) {
	noLeftoversAfter(t)
	f := Start(t, []HostSpec{{
		Name:  "u1",
		Files: map[string]string{"/usr/local/bin/kft-odd": "#!/bin/sh\necho odd-shell \"$@\"\n"},
		Users: []UserSpec{{Name: "kafka"}, {Name: "odd", Shell: "/usr/local/bin/kft-odd"}},
	}})
	h := f.Host("u1")
	ssh := func(user, command string) (string, error) {
		args := f.SSHArgs(h)
		args[len(args)-1] = user + "@" + h.Addr
		return runEnv([]string{stdPath, "HOME=" + f.clientHome, "LANG=C"}, "ssh", append(args, command)...)
	}
	if out, err := ssh("kafka", "id -un; echo $HOME"); err != nil || out != "kafka\n/tmp\n" {
		t.Errorf("kafka: %q %v", out, err)
	}
	if out, err := ssh("odd", "/bin/sh -s"); err != nil || out != "odd-shell -c /bin/sh -s\n" {
		t.Errorf("odd shell: %q %v", out, err)
	}
	done := make(chan error, 1)
	start := time.Now()
	go func() { _, err := h.SSHErr("sleep 20"); done <- err }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := h.ExecErr("pgrep", "-x", "sleep"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("session did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	h.KillSSHDAll(t)
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("session survived KillSSHDAll")
		}
		t.Logf("session ended after %v: %v", time.Since(start).Round(time.Millisecond), err)
	case <-time.After(10 * time.Second):
		t.Errorf("session still running 10 s after KillSSHDAll")
	}
	if _, err := h.SSHErr("true"); err == nil {
		t.Errorf("ssh works after KillSSHDAll")
	}

	// RestartSSHD: same host key (strict known_hosts), a new tracked PID
	// that KillSSHD acts on, and again after that.
	old := h.SSHDPid
	for i := 0; i < 2; i++ {
		h.RestartSSHD(t)
		if h.SSHDPid == old || comm(h.SSHDPid) != "sshd" {
			t.Fatalf("restart %d: SSHDPid %d (was %d)", i, h.SSHDPid, old)
		}
		if out, err := h.SSHErr("hostname"); err != nil || out != "u1\n" {
			t.Fatalf("restart %d: ssh: %q %v", i, out, err)
		}
		old = h.SSHDPid
		h.KillSSHD(t)
		if _, err := h.SSHErr("true"); err == nil {
			t.Errorf("restart %d: ssh works after KillSSHD", i)
		}
	}
	h.RestartSSHD(t) // left running: teardown must end it
}

// TestDialKeepsHostsUp: Dial joins a namespace on a locked thread. If that
// thread were thrown away, the kernel would fire the Pdeathsig of every
// host launcher forked from it and take those hosts down (a CI run lost
// its CP 7.1.7 host that way). After 40 dials every host must still run.
func TestDialKeepsHostsUp(t *testing.T) {
	noLeftoversAfter(t)
	var specs []HostSpec
	for i := range 6 {
		specs = append(specs, HostSpec{Name: fmt.Sprintf("d%d", i)})
	}
	specs[1].Kafka = &BrokerSpec{Version: "3.6.1"} // a listener on :9092
	f := Start(t, specs)
	a, b := f.Hosts[0], f.Hosts[1]
	f.Wire(t, a, b, 0, []string{"10.78.0.1/24"}, []string{"10.78.0.2/24"})
	for range 40 {
		a.Dial(t, "10.78.0.2:9092", 1)
	}
	for _, h := range f.Hosts {
		if err := syscall.Kill(h.InitPid, 0); err != nil {
			t.Errorf("%s: init %d gone after the dials: %v", h.Spec.Name, h.InitPid, err)
		}
		if _, err := h.ExecErr("true"); err != nil {
			t.Errorf("%s: %v", h.Spec.Name, err)
		}
	}
}
