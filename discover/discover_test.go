package discover

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// named is a listener that reports another address, so that kfake
// advertises it: the brokers look like real hosts (kafka-N.internal:9092).
type named struct {
	net.Listener
	addr fakeAddr
}

type fakeAddr string

func (a fakeAddr) Network() string { return "tcp" }
func (a fakeAddr) String() string  { return string(a) }
func (l named) Addr() net.Addr     { return l.addr }

// hostnames gives each listener kfake opens the name kafka-N.internal
// (N = 1, 2, …) and maps the names back to the real addresses for the
// client's dialer.
type hostnames struct {
	mu   sync.Mutex
	real map[string]string
}

func (h *hostnames) listen(network, address string) (net.Listener, error) {
	ln, err := net.Listen(network, "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	name := fmt.Sprintf("kafka-%d.internal:9092", len(h.real)+1)
	h.real[name] = ln.Addr().String()
	return named{ln, fakeAddr(name)}, nil
}

func (h *hostnames) dial(ctx context.Context, network, host string) (net.Conn, error) {
	h.mu.Lock()
	addr, ok := h.real[host]
	h.mu.Unlock()
	if !ok {
		return nil, &net.OpError{Op: "dial", Net: network, Err: errors.New("no such host " + host)}
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

func newCluster(t *testing.T, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func TestDiscoverBrokersAsAdvertised(t *testing.T) {
	h := &hostnames{real: map[string]string{}}
	newCluster(t, kfake.NumBrokers(3), kfake.ClusterID("Xy3cluster"), kfake.ListenFn(h.listen),
		kfake.BrokerConfigs(map[string]string{"socket.listen.backlog.size": "4096", "num.network.threads": "8"}))
	c, err := Discover(context.Background(), Options{Bootstrap: []string{"kafka-2.internal:9092"}, Dialer: h.dial, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if c.ID != "Xy3cluster" || len(c.Brokers) != 3 {
		t.Fatalf("cluster %q with %d brokers, want Xy3cluster with 3: %+v", c.ID, len(c.Brokers), c.Brokers)
	}
	if _, ok := c.Broker(c.Controller); !ok {
		t.Errorf("controller %d is none of the brokers", c.Controller)
	}
	hosts := map[string]bool{}
	for _, b := range c.Brokers {
		hosts[b.Addr()] = true
		if got := b.Configs["socket.listen.backlog.size"]; got != (Config{"4096", SourceDynamic}) {
			t.Errorf("broker %d socket.listen.backlog.size = %+v, want 4096 (dynamic)", b.NodeID, got)
		}
		if _, ok := b.Configs["ssl.keystore.password"]; ok {
			t.Errorf("broker %d: a key kaudit does not check was kept", b.NodeID)
		}
	}
	for i := 1; i <= 3; i++ {
		if n := fmt.Sprintf("kafka-%d.internal:9092", i); !hosts[n] {
			t.Errorf("%s not advertised: %v", n, hosts)
		}
	}
	if c.ConfigsError != "" {
		t.Errorf("configs error %q", c.ConfigsError)
	}
}

func TestDiscoverBrokerAddedAndRemoved(t *testing.T) {
	k := newCluster(t, kfake.NumBrokers(3))
	o := Options{Bootstrap: k.ListenAddrs()[:1], Timeout: 10 * time.Second}
	id, _, err := k.AddNode(-1, 0)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Discover(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Broker(id); !ok || len(c.Brokers) != 4 {
		t.Fatalf("after AddNode(%d): %+v", id, c.Brokers)
	}
	if err := k.RemoveNode(id); err != nil {
		t.Fatal(err)
	}
	c, err = Discover(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Broker(id); ok || len(c.Brokers) != 3 {
		t.Fatalf("after RemoveNode(%d): %+v", id, c.Brokers)
	}
}

func scramCluster(t *testing.T) *kfake.Cluster {
	return newCluster(t, kfake.NumBrokers(3), kfake.EnableSASL(), kfake.EnableACLs(),
		kfake.Superuser("SCRAM-SHA-512", "admin", "admin-secret"),
		kfake.User("SCRAM-SHA-512", "reader", "reader-secret"),
		kfake.BrokerConfigs(map[string]string{"socket.listen.backlog.size": "4096"}))
}

func TestDiscoverSCRAM(t *testing.T) {
	k := scramCluster(t)
	for _, tt := range []struct {
		name, user, pass string
		configs          bool
	}{
		{"superuser reads the configs", "admin", "admin-secret", true},
		{"a user without DESCRIBE_CONFIGS gets the brokers and a reason", "reader", "reader-secret", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mech := scram.Auth{User: tt.user, Pass: tt.pass}.AsSha512Mechanism()
			c, err := Discover(context.Background(), Options{Bootstrap: k.ListenAddrs(), SASL: mech, Timeout: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Brokers) != 3 {
				t.Fatalf("%d brokers, want 3", len(c.Brokers))
			}
			got := c.Brokers[0].Configs != nil
			if got != tt.configs {
				t.Errorf("configs read = %v, want %v (error %q)", got, tt.configs, c.ConfigsError)
			}
			if !tt.configs && !strings.Contains(c.ConfigsError, "CLUSTER_AUTHORIZATION_FAILED") {
				t.Errorf("configs error %q does not name the missing permission", c.ConfigsError)
			}
		})
	}
}

func TestDiscoverFailuresAreNamed(t *testing.T) {
	k := scramCluster(t)
	ca, srv := testCerts(t)
	tk := newCluster(t, kfake.NumBrokers(1), kfake.TLS(srv))
	stk := newCluster(t, kfake.NumBrokers(1), kfake.TLS(srv), kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", "admin", "admin-secret"))
	closedAddr := reservedPort(t)
	sshLike := replier(t, "SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n")
	httpLike := replier(t, "HTTP/1.1 400 Bad Request\r\n\r\n")
	closer := sizeReader(t)
	silent, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never answers
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()

	pool := x509.NewCertPool()
	pool.AddCert(ca)
	// A PLAINTEXT listener answers a SASL handshake with ILLEGAL_SASL_STATE
	// (Kafka's KafkaApis.handleSaslHandshakeRequest: the connection is
	// already authenticated); kfake without SASL does not, so it is told to.
	plain := newCluster(t, kfake.NumBrokers(1))
	plain.ControlKey(int16(kmsg.SASLHandshake), func(req kmsg.Request) (kmsg.Response, error, bool) {
		plain.KeepControl()
		resp := req.(*kmsg.SASLHandshakeRequest).ResponseKind().(*kmsg.SASLHandshakeResponse)
		resp.ErrorCode = kerr.IllegalSaslState.Code
		return resp, nil, true
	})
	resetter := resetOnRead(t)
	for _, tt := range []struct {
		name string
		o    Options
		want ErrorKind
		hint string // in the error, when set
	}{
		{"SASL to a listener without SASL", Options{Bootstrap: plain.ListenAddrs(), SASL: scram.Auth{User: "admin", Pass: "admin-secret"}.AsSha512Mechanism()}, AuthFailed,
			"this listener does not speak SASL"},
		{"plaintext to a TLS listener that resets", Options{Bootstrap: []string{resetter}}, TLSFailed,
			"the broker reset the connection at kaudit's first request"},
		{"wrong password", Options{Bootstrap: k.ListenAddrs(), SASL: scram.Auth{User: "admin", Pass: "nope"}.AsSha512Mechanism()}, AuthFailed, ""},
		{"wrong password over TLS (SASL_SSL)", Options{Bootstrap: stk.ListenAddrs(), TLS: &tls.Config{ServerName: "kafka.test", RootCAs: pool}, SASL: scram.Auth{User: "admin", Pass: "nope"}.AsSha512Mechanism()}, AuthFailed, ""},
		{"nothing listens", Options{Bootstrap: []string{closedAddr}}, Unreachable, ""},
		{"the SSH port", Options{Bootstrap: []string{sshLike}}, NotKafka, ""},
		{"an HTTP port", Options{Bootstrap: []string{httpLike}}, NotKafka, ""},
		{"plaintext to a TLS listener", Options{Bootstrap: tk.ListenAddrs()}, TLSFailed, ""},
		{"no SASL to a SASL listener", Options{Bootstrap: k.ListenAddrs()}, AuthFailed, ""},
		{"TLS to a plaintext listener", Options{Bootstrap: k.ListenAddrs(), TLS: &tls.Config{ServerName: "kafka.test", RootCAs: pool}}, TLSFailed, ""},
		{"TLS to a listener that closes at the ClientHello", Options{Bootstrap: []string{closer}, TLS: &tls.Config{ServerName: "kafka.test", RootCAs: pool}}, TLSFailed, ""},
		{"a listener that never answers", Options{Bootstrap: []string{silent.Addr().String()}}, Unreachable, ""},
		{"TLS with a CA that did not sign the broker", Options{Bootstrap: tk.ListenAddrs(), TLS: &tls.Config{ServerName: "kafka.test", RootCAs: x509.NewCertPool()}}, TLSFailed, ""},
		{"TLS with the wrong server name", Options{Bootstrap: tk.ListenAddrs(), TLS: &tls.Config{ServerName: "other.test", RootCAs: pool}}, TLSFailed, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.o.Timeout = 3 * time.Second
			start := time.Now()
			_, err := Discover(context.Background(), tt.o)
			var de *Error
			if !errors.As(err, &de) || de.Kind != tt.want {
				t.Fatalf("error %v, want kind %s", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.hint) {
				t.Errorf("error %v, want it to say %q", err, tt.hint)
			}
			t.Log(err)
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v with a 3 s timeout", d)
			}
		})
	}
	t.Run("TLS with the right CA", func(t *testing.T) {
		c, err := Discover(context.Background(), Options{Bootstrap: tk.ListenAddrs(), TLS: &tls.Config{ServerName: "kafka.test", RootCAs: pool}, Timeout: 10 * time.Second})
		if err != nil || len(c.Brokers) != 1 {
			t.Fatalf("%v, %+v", err, c)
		}
	})
}

// reservedPort returns a loopback address where nothing listens and
// nothing else can: a socket bound without SO_REUSEADDR and never put in
// LISTEN holds the port (a connect gets RST), where a listener closed at
// once frees it for the next test's server (ci-12: an sshd took it).
func reservedPort(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
}

// serveEach listens on loopback and hands each connection to fn, which
// closes it; the address is returned, the listener closed with the test.
func serveEach(t *testing.T, fn func(net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			fn(c)
		}
	}()
	return l.Addr().String()
}

// replier writes banner to each connection, as sshd or a web server
// does, then closes it.
func replier(t *testing.T, banner string) string {
	return serveEach(t, func(c net.Conn) {
		c.Write([]byte(banner))
		time.Sleep(50 * time.Millisecond)
		c.Close()
	})
}

// sizeReader treats each connection as a real plaintext Kafka broker
// treats a TLS ClientHello: it reads the four-byte size (0x16030100… is
// over 350 MB, past socket.request.max.bytes) and closes the connection
// with the rest unread, which resets it (kfake waits for the whole
// "request" instead).
func sizeReader(t *testing.T) string {
	return serveEach(t, func(c net.Conn) {
		io.ReadFull(c, make([]byte, 4))
		c.Close()
	})
}

// resetOnRead treats each connection as a TLS listener (a real Kafka
// SSL listener's SSLEngine) treats a plaintext request: it reads what
// came and resets the connection (SO_LINGER 0), which the client sees as
// ECONNRESET, not as a reply.
func resetOnRead(t *testing.T) string {
	return serveEach(t, func(c net.Conn) {
		c.Read(make([]byte, 64))
		c.(*net.TCPConn).SetLinger(0)
		c.Close()
	})
}

// testCerts makes a CA and a server certificate for kafka.test signed by it.
func testCerts(t *testing.T) (*x509.Certificate, *tls.Config) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kaudit test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kafka.test"}, DNSNames: []string{"kafka.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return ca, &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
}

// Each broker's ApiVersions answer is kept as it came: kfake capped at
// 3.6's table (kfake.MaxVersions) lists Produce at 9, 3.6's highest, and
// nothing 3.6 does not have.
func TestDiscoverReadsAPIVersions(t *testing.T) {
	for _, tt := range []struct {
		name    string
		opts    []kfake.Opt
		produce int16
	}{
		{"kfake as it is", nil, 13},
		{"kfake capped at 3.6", []kfake.Opt{kfake.MaxVersions(kversion.V3_6_0())}, 9},
	} {
		t.Run(tt.name, func(t *testing.T) {
			k := newCluster(t, append([]kfake.Opt{kfake.NumBrokers(2)}, tt.opts...)...)
			c, err := Discover(context.Background(), Options{Bootstrap: k.ListenAddrs()[:1], Timeout: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range c.Brokers {
				if b.APIVersionsError != "" || b.APIVersions[0] != tt.produce {
					t.Errorf("broker %d: Produce v%d (error %q), want v%d", b.NodeID, b.APIVersions[0], b.APIVersionsError, tt.produce)
				}
				if _, ok := b.APIVersions[18]; !ok {
					t.Errorf("broker %d does not list ApiVersions itself: %v", b.NodeID, b.APIVersions)
				}
				if v, ok := b.APIVersions[69]; tt.opts != nil && ok {
					t.Errorf("broker %d capped at 3.6 lists ConsumerGroupDescribe v%d", b.NodeID, v)
				}
			}
		})
	}
}

// kfake has no DescribeQuorum: the quorum is not listed, and the
// discovery says why and goes on.
func TestDiscoverQuorumNotSupported(t *testing.T) {
	k := newCluster(t, kfake.NumBrokers(1))
	c, err := Discover(context.Background(), Options{Bootstrap: k.ListenAddrs(), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if c.Quorum != nil || !strings.Contains(c.QuorumError, "no broker accepts DescribeQuorum") {
		t.Errorf("quorum %+v, error %q", c.Quorum, c.QuorumError)
	}
}

// A KRaft broker answers DescribeQuorum for the controllers: kfake is made
// to list it (its ApiVersions answer is 3.9's table and DescribeQuorum v2)
// and to answer it as a broker forwarding it would.
func TestDiscoverQuorum(t *testing.T) {
	k := newCluster(t, kfake.NumBrokers(1))
	k.ControlKey(int16(kmsg.ApiVersions), func(r kmsg.Request) (kmsg.Response, error, bool) {
		k.KeepControl()
		resp := r.ResponseKind().(*kmsg.ApiVersionsResponse)
		vs := kversion.V3_9_0()
		vs.SetMaxKeyVersion(describeQuorumKey, 2)
		vs.EachMaxKeyVersion(func(key, v int16) {
			ak := kmsg.NewApiVersionsResponseApiKey()
			ak.ApiKey, ak.MaxVersion = key, v
			resp.ApiKeys = append(resp.ApiKeys, ak)
		})
		return resp, nil, true
	})
	k.ControlKey(describeQuorumKey, func(r kmsg.Request) (kmsg.Response, error, bool) {
		k.KeepControl()
		resp := r.ResponseKind().(*kmsg.DescribeQuorumResponse)
		p := kmsg.NewDescribeQuorumResponseTopicPartition()
		p.LeaderID = 3001
		for _, id := range []int32{3002, 3000, 3001} {
			v := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
			v.ReplicaID = id
			p.CurrentVoters = append(p.CurrentVoters, v)
			n := kmsg.NewDescribeQuorumResponseNode()
			n.NodeID = id
			l := kmsg.NewDescribeQuorumResponseNodeListener()
			l.Name, l.Host, l.Port = "CONTROLLER", fmt.Sprintf("ctl-%d.internal", id), 9093
			n.Listeners = append(n.Listeners, l)
			resp.Nodes = append(resp.Nodes, n)
		}
		topic := kmsg.NewDescribeQuorumResponseTopic()
		topic.Topic = "__cluster_metadata"
		topic.Partitions = append(topic.Partitions, p)
		resp.Topics = append(resp.Topics, topic)
		return resp, nil, true
	})
	c, err := Discover(context.Background(), Options{Bootstrap: k.ListenAddrs(), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if c.QuorumError != "" || c.Quorum == nil {
		t.Fatalf("quorum %+v, error %q", c.Quorum, c.QuorumError)
	}
	want := "leader 3001 voters [{3000 [CONTROLLER=ctl-3000.internal:9093]} {3001 [CONTROLLER=ctl-3001.internal:9093]} {3002 [CONTROLLER=ctl-3002.internal:9093]}]"
	if got := fmt.Sprintf("leader %d voters %v", c.Quorum.Leader, c.Quorum.Voters); got != want {
		t.Errorf("quorum\n%s\nwant\n%s", got, want)
	}
}
