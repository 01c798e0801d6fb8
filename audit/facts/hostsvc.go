package facts

// The sections of issue 30's host services: the time service's state,
// the conntrack table's drop counters, and reverse DNS under SASL. Each
// is its own section of the gather script, read into its own field of
// Facts (TimeSync, ConntrackStat, ReverseDNS).
const (
	SecTimeSync  = "timesync"
	SecConntrack = "conntrack-stat"
	SecRDNS      = "rdns"
)

// SyncState is what a host's time service says of its clock.
type SyncState string

// The sync states: the service answered and said it is synchronised,
// or that it is not; or no service answered (none runs, or none that
// kaudit can ask).
const (
	Synced    SyncState = "synchronised"
	Unsynced  SyncState = "unsynchronised"
	NoService SyncState = "no-service"
)

// TimeSync is the time service's answer (the gather's timesync section).
type TimeSync struct {
	State SyncState `json:"state"`
	// Service is the daemon that answered: chronyd, ntpd,
	// systemd-timesyncd; "" when none did.
	Service string `json:"service,omitempty"`
	// Source is what was read: "chronyc -n tracking", "ntpq -n -c rv",
	// "/run/systemd/timesync/synchronized", "timedatectl show".
	Source string `json:"source,omitempty"`
	// Detail is the answer's deciding line ("Leap status : Not
	// synchronised", "leap=11, stratum=16", "NTP=yes NTPSynchronized=no").
	Detail string `json:"detail,omitempty"`
}

// ConntrackStat is /proc/net/stat/nf_conntrack summed over its per-CPU
// lines (the kernel prints one line per possible CPU, in hex): the
// counters of connections the table failed to take, cumulative since the
// module was loaded, per network namespace.
type ConntrackStat struct {
	CPUs         int    `json:"cpus"`
	Drop         uint64 `json:"drop"`
	EarlyDrop    uint64 `json:"early_drop"`
	InsertFailed uint64 `json:"insert_failed"`
}

// PTRState is the outcome of one reverse lookup.
type PTRState string

// The reverse lookup outcomes: a name came back; the resolver answered
// that there is none (getent exit 2); the lookup did not end within the
// script's bound (timeout's exit 124); the name given could not be
// resolved to an address to look up; the script's overall budget was
// spent before this one; another getent failure.
const (
	PTRFound      PTRState = "found"
	PTRMissing    PTRState = "missing"
	PTRTimeout    PTRState = "timeout"
	PTRUnresolved PTRState = "unresolved"
	PTRSkipped    PTRState = "skipped"
	PTRError      PTRState = "error"
)

// PTRLookup is one address resolved back to a name on the host.
type PTRLookup struct {
	// Addr is the address as kaudit asked (the inventory's: an IP or a
	// name); IP the address looked up (Addr, or what Addr resolved to).
	Addr string   `json:"addr"`
	IP   string   `json:"ip,omitempty"`
	Peer bool     `json:"peer,omitempty"` // a peer's address, not the host's own
	Name string   `json:"name,omitempty"` // the PTR answer's first name
	Stat PTRState `json:"state"`
	// Millis is how long the reverse lookup took on the host (from
	// /proc/uptime, 10 ms resolution).
	Millis int64 `json:"millis"`
}

// ReverseDNS is the gather's rdns section: the host's own address and
// its peers', looked up as a broker's SASL handshake looks them up.
// Nil: not gathered (no SASL listener named in the broker's
// configuration, or the section did not run; Sections says which).
type ReverseDNS struct {
	Lookups []PTRLookup `json:"lookups"`
}

var (
	syncStates = []SyncState{Synced, Unsynced, NoService}
	ptrStates  = []PTRState{PTRFound, PTRMissing, PTRTimeout, PTRUnresolved, PTRSkipped, PTRError}
)

// UnmarshalText rejects a sync state this kaudit does not know.
func (s *SyncState) UnmarshalText(b []byte) (err error) {
	*s, err = OneOf("time sync state", string(b), syncStates)
	return err
}

// UnmarshalText rejects a reverse lookup state this kaudit does not know.
func (s *PTRState) UnmarshalText(b []byte) (err error) {
	*s, err = OneOf("reverse lookup state", string(b), ptrStates)
	return err
}
