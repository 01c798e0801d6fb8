//go:build e2e

package testfleet

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// FakeJavaPath is where the fake broker binary appears inside every test
// host (a file in the host's private /usr overlay).
const FakeJavaPath = "/usr/lib/jvm/java-17-openjdk-amd64/bin/java"

// BrokerSpec describes the fake Kafka broker of a test host.
type BrokerSpec struct {
	// Version is the Kafka version string of the jars: "2.8.1", "3.6.1"
	// (Apache) or the Confluent Platform version "7.1.0" when Confluent.
	Version   string
	Confluent bool
	// Scala is the Scala suffix of the jar (default "2.13").
	Scala string
	// Port the broker listens on (default 9092).
	Port int
	// Properties are written to server.properties (sorted).
	// socket.listen.backlog.size is honoured only when the (Apache
	// equivalent) version is >= 3.2, else the backlog is 50 as the JDK's;
	// socket.receive.buffer.bytes defaults to 102400, -1 = don't set SO_RCVBUF.
	Properties map[string]string
	// IPv4Only makes the fake broker listen on 0.0.0.0 (AF_INET) instead of
	// the dual-stack wildcard "*" (AF_INET6, v6only=0) a JVM uses.
	IPv4Only bool
	// Argv, when set, replaces the generated command line (Argv[0] should be
	// FakeJavaPath or "java"; the binary run is always FakeJavaPath).
	Argv []string
	// NoFile, when set, is the broker process's open-files limit (soft
	// and hard, set by the fake broker on itself at start); 0 leaves the
	// Go runtime's (the soft limit raised to the hard one).
	NoFile int
}

// brokerLayout is what the fleet derives from a BrokerSpec.
type brokerLayout struct {
	home       string            // Apache: /opt/kafka_<scala>-<v>; Confluent: /usr/share/java/kafka (jar dir)
	jarDir     string            // dir holding the jars (inside the host)
	jars       []string          // jar file names created (empty files)
	configPath string            // server.properties inside the host
	logPath    string            // server.log inside the host
	argv       []string          // full command line
	workDir    string            // cwd of the broker
	props      map[string]string // effective server.properties content
	akVersion  string            // Apache Kafka version the broker behaves as
	versionLog string            // "Kafka version: X" as printed
	backlog    int               // backlog passed to listen()
	rcvbuf     int               // SO_RCVBUF, -1 = not set
	port       int
}

// cpToAK maps a Confluent Platform version to the Apache Kafka version it
// ships (rules/confluent.yaml: CP 5.0–5.5 = AK 2.0–2.5, 4.0/4.1 = 1.0/1.1, 6.2 = 2.8,
// 7.0–7.2 = 3.0–3.2 confirmed; 6.0/6.1 = 2.6/2.7, 7.N = 3.N, 8.0 = 4.0 assumed).
func cpToAK(cp string) string {
	maj, min, rest := splitVersion(cp)
	switch maj {
	case 4:
		return fmt.Sprintf("1.%d%s", min, rest)
	case 5:
		return fmt.Sprintf("2.%d%s", min, rest)
	case 6:
		return fmt.Sprintf("2.%d%s", min+6, rest)
	case 7:
		return fmt.Sprintf("3.%d%s", min, rest)
	case 8:
		return fmt.Sprintf("4.%d%s", min, rest)
	}
	return cp
}

func splitVersion(v string) (maj, min int, rest string) {
	parts := strings.SplitN(v, ".", 3)
	maj, _ = strconv.Atoi(parts[0])
	if len(parts) > 1 {
		min, _ = strconv.Atoi(parts[1])
	}
	if len(parts) > 2 {
		rest = "." + parts[2]
	}
	return
}

// confluentBackport reports whether a Confluent Platform release has
// socket.listen.backlog.size backported (confluentinc/kafka tags: CP 6.1.11, 6.2.10,
// 7.0.9, 7.1.7 and every later patch of those lines). This is the
// simulated broker's behaviour, kept apart from kaudit's own table
// (rules/confluent.yaml) on purpose: the e2e test checks one against the
// other.
func confluentBackport(cp string) bool {
	maj, min, rest := splitVersion(cp)
	patch, _ := strconv.Atoi(strings.TrimPrefix(strings.SplitN(strings.TrimPrefix(rest, "."), "-", 2)[0], "."))
	first := map[[2]int]int{{6, 1}: 11, {6, 2}: 10, {7, 0}: 9, {7, 1}: 7}[[2]int{maj, min}]
	return first > 0 && patch >= first
}

func versionAtLeast(v string, maj, min int) bool {
	a, b, _ := splitVersion(v)
	return a > maj || (a == maj && b >= min)
}

func (b *BrokerSpec) layout() (*brokerLayout, error) {
	if b.Version == "" {
		return nil, fmt.Errorf("BrokerSpec.Version is empty")
	}
	scala := b.Scala
	if scala == "" {
		scala = "2.13"
	}
	l := &brokerLayout{port: b.Port}
	if l.port == 0 {
		l.port = 9092
	}
	l.props = map[string]string{
		"broker.id":                   "0",
		"listeners":                   "PLAINTEXT://:" + strconv.Itoa(l.port),
		"num.network.threads":         "3",
		"num.io.threads":              "8",
		"socket.send.buffer.bytes":    "102400",
		"socket.receive.buffer.bytes": "102400",
		"socket.request.max.bytes":    "104857600",
		"zookeeper.connect":           "localhost:2181",
	}
	var fileVersion string
	if b.Confluent {
		fileVersion = b.Version + "-ccs"
		l.akVersion = cpToAK(b.Version)
		l.versionLog = b.Version + "-ccs"
		l.jarDir = "/usr/share/java/kafka"
		l.home = l.jarDir
		l.configPath = "/etc/kafka/server.properties"
		l.logPath = "/var/log/kafka/server.log"
		l.workDir = "/"
		l.props["log.dirs"] = "/var/lib/kafka"
	} else {
		fileVersion = b.Version
		l.akVersion = b.Version
		l.versionLog = b.Version
		l.home = "/opt/kafka_" + scala + "-" + b.Version
		l.jarDir = l.home + "/libs"
		l.configPath = l.home + "/config/server.properties"
		l.logPath = l.home + "/logs/server.log"
		l.workDir = l.home
		l.props["log.dirs"] = "/tmp/kafka-logs"
	}
	for k, v := range b.Properties {
		l.props[k] = v
	}
	l.jars = []string{
		"kafka-clients-" + fileVersion + ".jar",
		"kafka_" + scala + "-" + fileVersion + ".jar",
		"kafka-log4j-appender-" + fileVersion + ".jar",
		"kafka-tools-" + fileVersion + ".jar",
		"slf4j-api-1.7.36.jar",
		"zookeeper-3.6.3.jar",
	}
	// Effective listen backlog (KIP-764): the property exists from 3.2,
	// before that the JDK's ServerSocketAdaptor default of 50 applies.
	l.backlog = 50
	if versionAtLeast(l.akVersion, 3, 2) || (b.Confluent && confluentBackport(b.Version)) {
		if s, ok := l.props["socket.listen.backlog.size"]; ok {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("socket.listen.backlog.size=%q: want an int >= 1", s)
			}
			l.backlog = n
		}
	}
	l.rcvbuf = 102400
	if s := l.props["socket.receive.buffer.bytes"]; s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil, fmt.Errorf("socket.receive.buffer.bytes=%q: %v", s, err)
		}
		l.rcvbuf = n
	}

	var cp string
	if b.Confluent {
		// CP's kafka-run-class adds whole directories with a wildcard.
		cp = "/usr/bin/../share/java/kafka/*:/usr/bin/../share/java/confluent-telemetry/*"
	} else {
		// Apache's kafka-run-class lists every jar of $base_dir/libs, where
		// base_dir is "<home>/bin/..".
		var parts []string
		for _, j := range sortedCopy(l.jars) {
			parts = append(parts, l.home+"/bin/../libs/"+j)
		}
		cp = strings.Join(parts, ":")
	}
	logDir := path.Dir(l.logPath)
	log4j := "file:" + l.home + "/bin/../config/log4j.properties"
	if b.Confluent {
		log4j = "file:/etc/kafka/log4j.properties"
	}
	l.argv = []string{
		FakeJavaPath, "-Xmx1G", "-Xms1G", "-server", "-XX:+UseG1GC",
		"-XX:MaxGCPauseMillis=20", "-XX:InitiatingHeapOccupancyPercent=35",
		"-XX:+ExplicitGCInvokesConcurrent", "-XX:MaxInlineLevel=15",
		"-Djava.awt.headless=true",
		"-Dcom.sun.management.jmxremote", "-Dcom.sun.management.jmxremote.authenticate=false",
		"-Dcom.sun.management.jmxremote.ssl=false",
		"-Dkafka.logs.dir=" + logDir,
		"-Dlog4j.configuration=" + log4j,
		"-cp", cp, "kafka.Kafka", l.configPath,
	}
	if len(b.Argv) > 0 {
		l.argv = append([]string(nil), b.Argv...)
	}
	return l, nil
}

func (l *brokerLayout) serverProperties() string {
	var sb strings.Builder
	sb.WriteString("# written by kaudit testfleet\n")
	for _, k := range sortedKeys(l.props) {
		fmt.Fprintf(&sb, "%s=%s\n", k, l.props[k])
	}
	return sb.String()
}

// configDump mimics the "KafkaConfig values:" block of the broker log: only
// versions that know socket.listen.backlog.size print it.
func (l *brokerLayout) configDump() string {
	vals := map[string]string{
		"broker.id":                   l.props["broker.id"],
		"listeners":                   l.props["listeners"],
		"log.dirs":                    l.props["log.dirs"],
		"socket.receive.buffer.bytes": strconv.Itoa(l.rcvbuf),
		"socket.send.buffer.bytes":    l.props["socket.send.buffer.bytes"],
		"socket.request.max.bytes":    l.props["socket.request.max.bytes"],
	}
	if versionAtLeast(l.akVersion, 3, 2) {
		vals["socket.listen.backlog.size"] = strconv.Itoa(l.backlog)
	}
	var sb strings.Builder
	for i, k := range sortedKeys(vals) {
		if i > 0 {
			sb.WriteByte('\n')
		}
		fmt.Fprintf(&sb, "\t%s = %s", k, vals[k])
	}
	return sb.String()
}

// sortedKeys lists m's keys in order.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

func sortedCopy(s []string) []string {
	c := append([]string(nil), s...)
	sort.Strings(c)
	return c
}
