package facts

import (
	"fmt"
	"slices"
)

// The typed states below are read back from saved JSON reports (report.Load)
// and from the gather script's section end lines: a value this kaudit does
// not know is an error there, never a state silently taken at face value.

var (
	sectionStates     = []SectionState{SectionMissing, SectionDenied, SectionError, SectionAbsent, SectionPartial}
	probeStates       = []ProbeState{ProbeOK, ProbeNeedsRoot, ProbeNotPerNetns, ProbeNoPython, ProbeUnsupported, ProbeTimeout, ProbeHostChanged, ProbeError, ProbeInconclusive, ProbeUnproven}
	persistMechanisms = []PersistMechanism{PersistNetworkManager, PersistIfcfg, PersistIfupdown, PersistSystemdLink, PersistUdev}
	roles             = []Role{"", RoleClient}
)

// OneOf returns s as a T when it is one of valid, else an error naming
// what (e.g. "section state") and the values it may take.
func OneOf[T ~string](what, s string, valid []T) (T, error) {
	if slices.Contains(valid, T(s)) {
		return T(s), nil
	}
	return "", fmt.Errorf("unknown %s %q (one of %q)", what, s, valid)
}

// ParseSectionState is the state of a section end line or a saved report.
func ParseSectionState(s string) (SectionState, error) {
	return OneOf("section state", s, sectionStates)
}

// UnmarshalText rejects a section state this kaudit does not know.
func (s *SectionState) UnmarshalText(b []byte) (err error) {
	*s, err = ParseSectionState(string(b))
	return err
}

// UnmarshalText rejects a probe state this kaudit does not know.
func (s *ProbeState) UnmarshalText(b []byte) (err error) {
	*s, err = OneOf("probe state", string(b), probeStates)
	return err
}

// UnmarshalText rejects a persistence mechanism this kaudit does not know.
func (m *PersistMechanism) UnmarshalText(b []byte) (err error) {
	*m, err = OneOf("NIC persistence mechanism", string(b), persistMechanisms)
	return err
}

// UnmarshalText rejects a role this kaudit does not know.
func (r *Role) UnmarshalText(b []byte) (err error) {
	*r, err = OneOf("role", string(b), roles)
	return err
}
