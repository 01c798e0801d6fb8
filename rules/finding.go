package rules

import "encoding/json"

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

// Severities lists every severity, highest first.
var Severities = []Severity{Critical, High, Medium, Low, Info}

// Rank is 5 for critical down to 1 for info, 0 for an unknown string.
func (s Severity) Rank() int {
	for i, v := range Severities {
		if v == s {
			return len(Severities) - i
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
	Source string `json:"source,omitempty"`
	Fix    *Fix   `json:"fix,omitempty"`
}

// Verdict sources, strongest first.
const (
	SourceProbe     = "probe"     // the SYN-cookie probe observed the kernel (audit/probe)
	SourceChangelog = "changelog" // the kernel package changelog (exact fix title, UEK LTS tag)
	SourceVersion   = "version"   // the upstream version table (kernels.yaml) applied to the release
	SourceNone      = "none"      // nothing settled it: the verdict is unknown
)

// Fix says how a failing finding can be remediated. Automatic changes are
// expressed as data so that remediate can plan them without re-deriving
// anything; Manual carries what a human must do (kernel or Kafka upgrade).
type Fix struct {
	Summary string `json:"summary"`
	// Sysctl: key -> target value (runtime and persisted).
	Sysctl map[string]string `json:"sysctl,omitempty"`
	// KafkaProperties: key -> target value in server.properties (broker restart required).
	KafkaProperties map[string]string `json:"kafka_properties,omitempty"`
	// NIC ring/offload targets: interface -> setting -> value ("rx": "4096", "gro": "on").
	NIC map[string]map[string]string `json:"nic,omitempty"`
	// NICPersist: NIC settings whose running value already is the value
	// given, to persist only (interface -> setting -> value): the planner
	// makes persist-only changes of them.
	NICPersist map[string]map[string]string `json:"nic_persist,omitempty"`
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
