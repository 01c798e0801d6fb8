package parse

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestParseKafkaJar(t *testing.T) {
	tests := []struct {
		path string
		want KafkaJar
		ok   bool
	}{
		{"/opt/kafka/libs/kafka_2.13-2.8.1.jar", KafkaJar{"2.8.1", "apache", "2.13"}, true},
		{"/opt/kafka/bin/../libs/kafka_2.12-3.6.1.jar", KafkaJar{"3.6.1", "apache", "2.12"}, true},
		{"kafka_2.11-0.10.2.1.jar", KafkaJar{"0.10.2.1", "apache", "2.11"}, true},
		{"/opt/kafka/libs/kafka_2.13-4.0.0.jar", KafkaJar{"4.0.0", "apache", "2.13"}, true},
		{"/usr/share/java/kafka/kafka_2.13-7.1.0-ccs.jar", KafkaJar{"7.1.0", "confluent", "2.13"}, true},
		{"/usr/share/java/kafka/kafka_2.13-7.4.0-ce.jar", KafkaJar{"7.4.0", "confluent", "2.13"}, true},
		// Confluent Platform 4.0 (AK 1.0.0): the old -cpN naming keeps the AK version.
		{"/home/xzy/confluent-4.0.0/share/java/kafka/kafka_2.11-1.0.0-cp1.jar", KafkaJar{"1.0.0-cp1", "confluent", "2.11"}, true},
		{"/opt/kafka/libs/kafka-clients-2.8.1.jar", KafkaJar{}, false},
		{"/opt/kafka/libs/kafka-streams-3.6.1.jar", KafkaJar{}, false},
		{"/opt/kafka/libs/kafka-streams-scala_2.13-3.6.1.jar", KafkaJar{}, false},
		{"/opt/kafka/libs/kafka_2.13-3.6.1-sources.jar", KafkaJar{}, false},
		{"/opt/kafka/libs/kafka_2.13-3.6.1-test.jar", KafkaJar{}, false},
		{"/opt/kafka/libs/kafka_2.13-3.6.1-javadoc.jar", KafkaJar{}, false},
		{"/opt/kafka/libs/kafka_2.13-3.6.1-test-sources.jar", KafkaJar{}, false},
		{"/opt/kafka/libs/kafka_2.13-3.6.1-scaladoc.jar", KafkaJar{}, false},
		{"/opt/kafka/libs/kafka-tools-3.6.1.jar", KafkaJar{}, false},
		{"/opt/kafka/libs/kafka-server-common-3.6.1.jar", KafkaJar{}, false},
		{"/opt/kafka/libs/kafka-server-4.0.0.jar", KafkaJar{}, false},
		{"/usr/share/java/kafka/kafka-clients-7.1.0-ccs.jar", KafkaJar{}, false},
		{"/usr/share/java/kafka/*", KafkaJar{}, false},
		{"/opt/kafka/libs/kafka_2.13-2.8.1.jar.bak", KafkaJar{}, false},
		{"", KafkaJar{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, ok := ParseKafkaJar(tt.path)
			if ok != tt.ok || got != tt.want {
				t.Errorf("ParseKafkaJar = %+v, %v; want %+v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// psArgs turns a captured `ps` command line back into arguments. It is only
// used on samples whose arguments contain no spaces.
func psArgs(t *testing.T, file string) []string {
	return strings.Fields(readTestdata(t, file))
}

func cmdlineArgs(t *testing.T, file string) []string {
	s := strings.TrimSuffix(readTestdata(t, file), "\x00")
	return strings.Split(s, "\x00")
}

func TestParseKafkaCmdline(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		wantOK    bool
		main      string
		config    string
		overrides map[string]string
		cpLen     int
		jar       KafkaJar
		jarPath   string
		firstCP   string
	}{
		{
			name: "apache 2.8.1 /proc cmdline with overrides", args: cmdlineArgs(t, "cmdline/apache-2.8.1-daemon-override-reconstructed.cmdline"),
			wantOK: true, main: "kafka.Kafka", config: "/opt/kafka/config/server.properties",
			overrides: map[string]string{"socket.listen.backlog.size": "1024", "listeners": "PLAINTEXT://:9092"},
			cpLen:     22, jar: KafkaJar{"2.8.1", "apache", "2.13"}, jarPath: "/opt/kafka/libs/kafka_2.13-2.8.1.jar",
			firstCP: "/opt/kafka/libs/activation-1.1.1.jar",
		},
		{
			name: "apache 3.2.1 scala 2.12, relative config", args: psArgs(t, "cmdline/apache-3.2.1-scala2.12-ps.txt"),
			wantOK: true, main: "kafka.Kafka", config: "config/server.properties",
			cpLen: 100, jar: KafkaJar{"3.2.1", "apache", "2.12"}, jarPath: "/home/sqream/kafka_2.12-3.2.1/libs/kafka_2.12-3.2.1.jar",
			firstCP: "/home/sqream/kafka_2.12-3.2.1/libs/activation-1.1.1.jar",
		},
		{
			name: "confluent platform, wildcard classpath", args: psArgs(t, "cmdline/confluent-cp-kafka-properties-ps.txt"),
			wantOK: true, main: "kafka.Kafka", config: "/etc/kafka/kafka.properties", cpLen: 2, firstCP: "/usr/share/java/kafka/*",
		},
		{
			name: "confluent 5.x SupportedKafka", args: psArgs(t, "cmdline/confluent-5.x-supportedkafka-ps.txt"),
			wantOK: true, main: "io.confluent.support.metrics.SupportedKafka", config: "/etc/kafka/kafka.properties", cpLen: 3, firstCP: "/usr/share/java/kafka/*",
		},
		{
			name: "init script with leading colon in -cp", args: psArgs(t, "cmdline/confluent-init-script-leading-colon-cp.txt"),
			wantOK: true, main: "io.confluent.support.metrics.SupportedKafka", config: "/etc/kafka/server.properties", cpLen: 3, firstCP: "/usr/share/java/kafka/*",
		},
		{name: "zookeeper", args: psArgs(t, "cmdline/zookeeper-not-kafka-ps.txt")},
		{name: "kafka connect", args: psArgs(t, "cmdline/connect-distributed-not-broker-ps.txt")},
		{name: "empty", args: nil},
		{name: "just java", args: []string{"java"}},
		{name: "kafka.Kafka as a -D value", args: []string{"java", "-Dmain=kafka.Kafka", "org.example.Main"}},
		{
			name: "--class-path=, --override=, no config", args: []string{"java", "--class-path=/a/kafka_2.13-3.7.0.jar", "kafka.Kafka", "--override=broker.id=3", "--version"},
			wantOK: true, main: "kafka.Kafka", overrides: map[string]string{"broker.id": "3"}, cpLen: 1,
			jar: KafkaJar{"3.7.0", "apache", "2.13"}, jarPath: "/a/kafka_2.13-3.7.0.jar", firstCP: "/a/kafka_2.13-3.7.0.jar",
		},
		{
			name: "-classpath and --add-opens value", args: []string{"/usr/bin/java", "--add-opens", "java.base/java.lang=ALL-UNNAMED", "-classpath", "/x/kafka_2.13-3.5.1.jar", "kafka.Kafka", "/etc/kafka/server.properties"},
			wantOK: true, main: "kafka.Kafka", config: "/etc/kafka/server.properties", cpLen: 1,
			jar: KafkaJar{"3.5.1", "apache", "2.13"}, jarPath: "/x/kafka_2.13-3.5.1.jar", firstCP: "/x/kafka_2.13-3.5.1.jar",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseKafkaCmdline(tt.args)
			if ok != tt.wantOK {
				t.Fatalf("ParseKafkaCmdline ok = %v, want %v (%+v)", ok, tt.wantOK, got)
			}
			if !ok {
				return
			}
			if got.Main != tt.main || got.Config != tt.config {
				t.Errorf("Main, Config = %q, %q; want %q, %q", got.Main, got.Config, tt.main, tt.config)
			}
			if !reflect.DeepEqual(got.Overrides, tt.overrides) {
				t.Errorf("Overrides = %v, want %v", got.Overrides, tt.overrides)
			}
			if len(got.Classpath) != tt.cpLen || (tt.cpLen > 0 && got.Classpath[0] != tt.firstCP) {
				t.Errorf("Classpath has %d entries starting %q, want %d starting %q", len(got.Classpath), first(got.Classpath), tt.cpLen, tt.firstCP)
			}
			jar, p, found := KafkaVersionFromClasspath(got.Classpath)
			if found != (tt.jarPath != "") || jar != tt.jar || p != tt.jarPath {
				t.Errorf("KafkaVersionFromClasspath = %+v, %q, %v; want %+v, %q", jar, p, found, tt.jar, tt.jarPath)
			}
		})
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

func TestKafkaVersionFromClasspathExpanded(t *testing.T) {
	// A Confluent wildcard classpath after the gatherer expanded it: the
	// first core jar wins, other kafka jars are passed over.
	entries := []string{
		"/usr/share/java/kafka/kafka-clients-7.1.0-ccs.jar",
		"/usr/share/java/kafka/kafka_2.13-7.1.0-ccs-sources.jar",
		"/usr/share/java/kafka/kafka-server-common-7.1.0-ccs.jar",
		"/usr/share/java/kafka/kafka_2.13-7.1.0-ccs.jar",
		"/usr/share/java/kafka/kafka_2.12-7.0.0-ccs.jar",
	}
	jar, p, ok := KafkaVersionFromClasspath(entries)
	if !ok || jar != (KafkaJar{"7.1.0", "confluent", "2.13"}) || p != entries[3] {
		t.Errorf("got %+v, %q, %v", jar, p, ok)
	}
	if _, _, ok := KafkaVersionFromClasspath([]string{"/usr/share/java/kafka/*"}); ok {
		t.Error("an unexpanded wildcard must not be taken for a jar")
	}
}

func TestCmdlineSamplesExist(t *testing.T) {
	for _, p := range allSamples(t, "cmdline") {
		if fi, err := os.Stat(p); err != nil || fi.Size() == 0 {
			t.Errorf("%s: empty or unreadable sample", p)
		}
	}
}
