package parse

import (
	"path"
	"regexp"
	"strings"
)

// KafkaJar is what the core broker jar's file name says.
type KafkaJar struct {
	// Version as the jar names it without the Confluent "-ccs"/"-ce" suffix:
	// "2.8.1" (Apache) or "7.1.0" (Confluent Platform). Confluent Platform
	// before 5.4 named jars with the Apache Kafka version and a "-cpN" suffix
	// (kafka_2.11-1.0.0-cp1.jar); that suffix is kept ("1.0.0-cp1") because
	// the number is then not a Confluent Platform version.
	Version string
	// Distribution is "apache" or "confluent".
	Distribution string
	// Scala is the Scala binary version, e.g. "2.13".
	Scala string
}

// kafka_<scala>-<version>[-ccs|-ce|-cpN].jar; sources, javadoc, test and
// scaladoc jars have a further suffix and do not match.
var kafkaJarRE = regexp.MustCompile(`^kafka_(\d+\.\d+)-(\d+\.\d+\.\d+(?:\.\d+)?)(-ccs|-ce|-cp\d+)?\.jar$`)

// ParseKafkaJar recognises the core broker jar by its file name (any
// directory): Apache "kafka_2.13-2.8.1.jar", "kafka_2.11-0.10.2.1.jar",
// Confluent "kafka_2.13-7.1.0-ccs.jar" (Confluent Platform 7.1.0) and
// Confluent Server "kafka_2.13-7.4.0-ce.jar". It returns false for every
// other jar: kafka-clients, kafka-streams, kafka-tools, kafka-server-common,
// kafka-server (Kafka 4.x still ships kafka_2.13-4.x.jar as the core jar),
// and -sources, -javadoc, -test, -test-sources jars.
func ParseKafkaJar(p string) (KafkaJar, bool) {
	m := kafkaJarRE.FindStringSubmatch(path.Base(p))
	if m == nil {
		return KafkaJar{}, false
	}
	j := KafkaJar{Version: m[2], Distribution: "apache", Scala: m[1]}
	switch suffix := m[3]; {
	case suffix == "-ccs" || suffix == "-ce":
		j.Distribution = "confluent"
	case strings.HasPrefix(suffix, "-cp"):
		j.Distribution = "confluent"
		j.Version += suffix
	}
	return j, true
}

// KafkaVersionFromClasspath returns the first core broker jar among the
// classpath entries (already split, wildcards possibly expanded) and its
// path. Entries that are directories or unexpanded wildcards are skipped.
func KafkaVersionFromClasspath(entries []string) (KafkaJar, string, bool) {
	for _, e := range entries {
		if j, ok := ParseKafkaJar(e); ok {
			return j, e, true
		}
	}
	return KafkaJar{}, "", false
}

// KafkaCmd is what a broker's command line says.
type KafkaCmd struct {
	Main      string            // the main class, e.g. "kafka.Kafka"
	Config    string            // the properties file, cleaned (relative paths stay relative: the broker's working directory is not known)
	Classpath []string          // -cp entries in order, cleaned (bin/../libs → libs), empty entries dropped
	Overrides map[string]string // --override key=value pairs
}

// kafkaMainClasses are the broker entry points: Apache and Confluent
// Platform use kafka.Kafka; Confluent Platform up to 5.x started brokers
// through io.confluent.support.metrics.SupportedKafka.
var kafkaMainClasses = map[string]bool{
	"kafka.Kafka": true,
	"io.confluent.support.metrics.SupportedKafka": true,
}

// javaOptsWithValue are java launcher options whose value is the next
// argument.
var javaOptsWithValue = map[string]bool{
	"-cp": true, "-classpath": true, "--class-path": true,
	"-p": true, "--module-path": true, "--upgrade-module-path": true,
	"--add-modules": true, "--add-opens": true, "--add-exports": true, "--add-reads": true,
	"--limit-modules": true, "--patch-module": true, "--enable-native-access": true,
}

// ParseKafkaCmdline reads a broker's /proc/PID/cmdline split on NUL:
//
//	java -Xmx1G … -cp a.jar:…:kafka_2.13-2.8.1.jar kafka.Kafka /opt/kafka/bin/../config/server.properties --override k=v
//
// It returns false when no Kafka broker main class is on the command line.
// The classpath comes from -cp, -classpath, --class-path or
// --class-path=…; Config is the first non-option argument after the main
// class, cleaned (/opt/kafka/bin/../config → /opt/kafka/config); every
// "--override key=value" is collected.
func ParseKafkaCmdline(args []string) (KafkaCmd, bool) {
	var cmd KafkaCmd
	main := -1
	for i := 1; i < len(args); i++ {
		a := args[i]
		if kafkaMainClasses[a] {
			main = i
			break
		}
		switch {
		case a == "-cp" || a == "-classpath" || a == "--class-path":
			if i+1 < len(args) {
				cmd.Classpath = splitClasspath(args[i+1])
			}
			i++
		case strings.HasPrefix(a, "--class-path="):
			cmd.Classpath = splitClasspath(strings.TrimPrefix(a, "--class-path="))
		case javaOptsWithValue[a]:
			i++
		case !strings.HasPrefix(a, "-"):
			// A main class or -jar target that is not Kafka's.
			return KafkaCmd{}, false
		}
	}
	if main < 0 {
		return KafkaCmd{}, false
	}
	cmd.Main = args[main]
	for i := main + 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--override":
			if i+1 < len(args) {
				cmd.addOverride(args[i+1])
				i++
			}
		case strings.HasPrefix(a, "--override="):
			cmd.addOverride(strings.TrimPrefix(a, "--override="))
		case strings.HasPrefix(a, "-"):
			// --version and the like: no value.
		case cmd.Config == "":
			cmd.Config = path.Clean(a)
		}
	}
	return cmd, true
}

func (c *KafkaCmd) addOverride(kv string) {
	if c.Overrides == nil {
		c.Overrides = make(map[string]string)
	}
	k, v, _ := strings.Cut(kv, "=")
	c.Overrides[strings.TrimSpace(k)] = v
}

func splitClasspath(s string) []string {
	var out []string
	for _, e := range strings.Split(s, ":") {
		if e != "" {
			out = append(out, path.Clean(e))
		}
	}
	return out
}
