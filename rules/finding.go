package rules

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

// Status is a finding's verdict.
type Status string

const (
	Pass    Status = "pass"
	Fail    Status = "fail"
	Warn    Status = "warn"    // not a failure, but worth a look (e.g. risk mitigated another way)
	Unknown Status = "unknown" // the facts cannot settle it: never read as "safe"
	Skip    Status = "skip"    // does not apply to this host; Reason says why
	Error   Status = "error"   // the rule could not be evaluated (kaudit bug or broken facts)
	Waived  Status = "waived"  // a fail or unknown accepted by a waiver file (kaudit --waivers): kept out of score and exit code
)

// Severity orders findings; "critical" is the highest.
type Severity string

const (
	Critical Severity = "critical"
	High     Severity = "high"
	Medium   Severity = "medium"
	Low      Severity = "low"
	Info     Severity = "info"
)

// severities lists every severity, highest first.
var severities = [...]Severity{Critical, High, Medium, Low, Info}

// Severities lists every severity, highest first (a new slice each call).
func Severities() []Severity { return slices.Clone(severities[:]) }

// Rank is 5 for critical down to 1 for info, 0 for an unknown string.
func (s Severity) Rank() int {
	for i, v := range severities {
		if v == s {
			return len(severities) - i
		}
	}
	return 0
}

// ParseSeverity accepts a severity name (case-sensitive, lower case).
func ParseSeverity(s string) (Severity, bool) {
	v := Severity(s)
	return v, v.Rank() > 0
}

// Finding is one rule's verdict on one host.
type Finding struct {
	Rule     string   `json:"rule"`
	Title    string   `json:"title"`
	Status   Status   `json:"status"`
	Severity Severity `json:"severity"` // effective severity for this host (a rule may lower or raise its default, Reason says why)
	Observed string   `json:"observed,omitempty"`
	Expected string   `json:"expected,omitempty"`
	Evidence []string `json:"evidence,omitempty"`
	Reason   string   `json:"reason"`
	// Source says which evidence decided the verdict, for rules that have
	// more than one (kernel-synack-wscale: probe > changelog > version >
	// none); "" for the others.
	Source Source `json:"source,omitempty"`
	Fix    *Fix   `json:"fix,omitempty"`
}

// Source is which evidence decided a verdict (Finding.Source).
type Source string

// Verdict sources, strongest first.
const (
	SourceProbe     Source = "probe"     // the SYN-cookie probe observed the kernel (audit/probe)
	SourceChangelog Source = "changelog" // the kernel package changelog (exact fix title, UEK LTS tag)
	SourceVersion   Source = "version"   // the upstream version table (kernels.yaml) applied to the release
	SourceNone      Source = "none"      // nothing settled it: the verdict is unknown
)

var sources = []Source{"", SourceProbe, SourceChangelog, SourceVersion, SourceNone}

// UnmarshalText rejects a verdict source this kaudit does not know (a
// saved report's finding).
func (s *Source) UnmarshalText(b []byte) (err error) {
	*s, err = facts.OneOf("verdict source", string(b), sources)
	return err
}

// Fix says how a failing finding can be remediated. Automatic changes are
// expressed as data so that remediate can plan them without re-deriving
// anything; Manual carries what a human must do (kernel or Kafka upgrade).
type Fix struct {
	Summary string `json:"summary"`
	// Sysctl: key -> target value (runtime and persisted).
	Sysctl map[string]string `json:"sysctl,omitempty"`
	// Bounds: key of Sysctl or KafkaProperties -> which values satisfy the
	// rule (at least, at most, exactly the target; on one field of a
	// multi-value sysctl), so that two rules asking for one key merge by
	// direction (remediate). A key without a bound asks for exactly its value.
	Bounds map[string]Bound `json:"bounds,omitempty"`
	// KafkaProperties: key -> target value in server.properties (broker restart required).
	KafkaProperties map[string]string `json:"kafka_properties,omitempty"`
	// NIC ring/offload targets: interface -> setting -> value ("rx": "4096", "gro": "on").
	NIC map[string]map[string]string `json:"nic,omitempty"`
	// NICPersist: NIC settings whose running value already is the value
	// given, to persist only (interface -> setting -> value): the planner
	// makes persist-only changes of them.
	NICPersist map[string]map[string]string `json:"nic_persist,omitempty"`
	// NoFile: the open-files limit (soft, at least) the broker process
	// needs; remediate gives it through the broker's systemd unit (a
	// drop-in, broker restart required) or says where to set it.
	NoFile int64 `json:"nofile,omitempty"`
	// Manual is set when kaudit cannot fix it itself (kernel, Kafka upgrade).
	Manual string `json:"manual,omitempty"`
	// Alternatives are other acceptable fixes, each with its trade-off.
	Alternatives []Alternative `json:"alternatives,omitempty"`
	Restart      bool          `json:"restart_required,omitempty"`
	// WhenUnknown: the fix is worth planning while the finding is unknown
	// too (the facts cannot rule the risk out), not only when it fails.
	WhenUnknown bool `json:"-"`
	// WhenWarn: the fix is worth planning while the finding warns
	// (nic-persisted: nothing persists a running value, so it may revert).
	WhenWarn bool `json:"-"`
}

// Direction is which values of a target satisfy the rule that asks for it.
type Direction string

// Directions of a fix.
const (
	AtLeast Direction = "at least"
	AtMost  Direction = "at most"
	Exactly Direction = "exactly"
)

// Bound is the direction of one requested value, and for a multi-value
// sysctl (net.ipv4.tcp_rmem) the 1-based field it bounds (0: the whole value).
type Bound struct {
	Dir   Direction
	Field int
}

// MarshalText writes "at least", or "at least, field 3" for a field.
func (b Bound) MarshalText() ([]byte, error) {
	if b.Field > 0 {
		return []byte(fmt.Sprintf("%s, field %d", b.Dir, b.Field)), nil
	}
	return []byte(b.Dir), nil
}

// UnmarshalText reads what MarshalText writes.
func (b *Bound) UnmarshalText(t []byte) error {
	s := string(t)
	*b = Bound{}
	if i := strings.Index(s, ", field "); i >= 0 {
		n, err := strconv.Atoi(s[i+len(", field "):])
		if err != nil || n < 1 {
			return fmt.Errorf("bound %q: bad field", s)
		}
		b.Field, s = n, s[:i]
	}
	switch d := Direction(s); d {
	case AtLeast, AtMost, Exactly:
		b.Dir = d
		return nil
	}
	return fmt.Errorf("bound %q is not at least, at most or exactly", s)
}

// BoundOf is the bound a fix puts on key (Exactly when it names none).
func (f *Fix) BoundOf(key string) Bound {
	if b, ok := f.Bounds[key]; ok && b.Dir != "" {
		return b
	}
	return Bound{Dir: Exactly}
}

// atLeast records that key's value is a lower bound.
func (f *Fix) atLeast(key string) {
	if f.Bounds == nil {
		f.Bounds = map[string]Bound{}
	}
	f.Bounds[key] = Bound{Dir: AtLeast}
}

// step is the severity n steps above s (below for n < 0), within critical..info.
func (s Severity) step(n int) Severity {
	r := min(max(s.Rank()+n, 1), len(severities))
	return severities[len(severities)-r]
}

// Alternative is another acceptable fix. Text says what it changes and its
// trade-off, and is what reports show (its JSON form is the text alone);
// the typed fields say what it would change, for the planner.
type Alternative struct {
	Text            string
	Sysctl          map[string]string
	KafkaProperties map[string]string
	Restart         bool // needs a broker restart
	// Offer: a planner lists it as a manual action and never applies it.
	Offer bool
}

// MarshalJSON writes the alternative as its text.
func (a Alternative) MarshalJSON() ([]byte, error) { return json.Marshal(a.Text) }

// UnmarshalJSON reads the text form (the typed fields stay empty).
func (a *Alternative) UnmarshalJSON(b []byte) error {
	*a = Alternative{}
	return json.Unmarshal(b, &a.Text)
}
