package parse

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

// MetaDir is one log directory of the kafka-meta section: its path and
// what its meta.properties says, or why it could not be read.
type MetaDir struct {
	Path string
	// Meta is nil when the file is absent or not readable (State says).
	Meta *facts.MetaProperties
	// State is "" when meta.properties was read, facts.SectionAbsent (no
	// meta.properties: the directory was never formatted or is not this
	// broker's) or facts.SectionDenied.
	State facts.SectionState
}

// KafkaMeta parses the kafka-meta section: a "dir=PATH" line per log
// directory, followed by "meta=KEY=VALUE" lines (only version, cluster.id,
// node.id, broker.id and directory.id, as java.util.Properties.store
// writes them in meta.properties: see Kafka's
// metadata/src/main/java/org/apache/kafka/metadata/properties/MetaProperties.java),
// or by "!absent" or "!denied". A node.id or broker.id that is not an
// integer is an error: the directory's identity is then unknown, never
// guessed.
func KafkaMeta(body string) ([]MetaDir, error) {
	var dirs []MetaDir
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimSuffix(line, "\r")
		if p, ok := strings.CutPrefix(line, "dir="); ok {
			dirs = append(dirs, MetaDir{Path: p, State: facts.SectionAbsent})
			continue
		}
		if line == "" {
			continue
		}
		if len(dirs) == 0 {
			return nil, fmt.Errorf("kafka-meta: %q before any dir= line", line)
		}
		d := &dirs[len(dirs)-1]
		if err := d.add(line); err != nil {
			return nil, fmt.Errorf("kafka-meta %s: %w", d.Path, err)
		}
	}
	return dirs, nil
}

func (d *MetaDir) add(line string) error {
	switch line {
	case "!absent":
		d.State, d.Meta = facts.SectionAbsent, nil
		return nil
	case "!denied":
		d.State, d.Meta = facts.SectionDenied, nil
		return nil
	}
	kv, ok := strings.CutPrefix(line, "meta=")
	if !ok {
		return fmt.Errorf("unexpected line %q", line)
	}
	key, val, _ := strings.Cut(kv, "=")
	val = strings.TrimSpace(val)
	if d.Meta == nil {
		d.Meta = &facts.MetaProperties{NodeID: -1, BrokerID: -1}
		d.State = ""
	}
	m := d.Meta
	switch key {
	case "version":
		m.Version = val
	case "cluster.id":
		m.ClusterID = val
	case "directory.id":
		m.DirectoryID = val
	case "node.id", "broker.id":
		n, err := strconv.Atoi(val)
		if err != nil || n < 0 {
			return fmt.Errorf("%s=%q is not a node id", key, val)
		}
		if key == "node.id" {
			m.NodeID = n
		} else {
			m.BrokerID = n
		}
	default:
		return fmt.Errorf("unexpected key %q", key)
	}
	return nil
}
