package apply

import (
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/remediate"
)

func dropInChange(unit, to string) remediate.Change {
	return remediate.Change{Host: "b1", Rules: []string{"broker-open-files"}, Kind: remediate.KindUnitDropIn, Target: remediate.NoFileTarget(unit),
		From: "4096", To: to, Persist: true, PersistPath: remediate.DropInPath(unit), RestartRequired: true}
}

// The drop-in becomes a created file (mode 0644, backup "did not
// exist"), or a replaced one (backup of its old content), and its unit
// is reloaded; a change that is not kaudit's own drop-in is refused.
func TestPrepareDropIn(t *testing.T) {
	path := "/etc/systemd/system/kafka.service.d/90-kaudit-nofile.conf"
	old := []byte("[Service]\nLimitNOFILE=50000\n")
	tests := []struct {
		name    string
		c       remediate.Change
		st      map[string]fileState
		wantErr string
		existed bool
	}{
		{"new file", dropInChange("kafka.service", "100000"), nil, "", false},
		{"replaced", dropInChange("kafka.service", "100000:524288"), map[string]fileState{path: {exists: true, sha: SHA256(old), mode: "644:root:root", content: old}}, "", true},
		{"other path", func() remediate.Change {
			c := dropInChange("kafka.service", "100000")
			c.PersistPath = "/etc/passwd"
			return c
		}(), nil, "want /etc/systemd/system/kafka.service.d/90-kaudit-nofile.conf", false},
		{"bad unit", dropInChange("ka fka.service", "100000"), nil, "not a service's LimitNOFILE", false},
		{"bad value", dropInChange("kafka.service", "100000\nExecStart=/bin/sh"), nil, "want N or N:HARD", false},
		{"zero", dropInChange("kafka.service", "0"), nil, "want N or N:HARD", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &readState{files: tt.st}
			if st.files == nil {
				st.files = map[string]fileState{}
			}
			p, err := prepare("20261201T230000Z-abcd", []remediate.Change{tt.c}, st)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := remediate.DropInText(tt.c.To)
			if len(p.params.Files) != 1 || p.params.Files[0].Path != path || string(p.params.Files[0].Content) != want || p.params.Files[0].Existed != tt.existed {
				t.Fatalf("files %+v, want %s with %q", p.params.Files, path, want)
			}
			if !tt.existed && p.params.Files[0].Mode != "0644" {
				t.Errorf("mode %q", p.params.Files[0].Mode)
			}
			if len(p.backups) != 1 || p.backups[0].Existed != tt.existed || (tt.existed && p.backups[0].SHA256 != SHA256(old)) {
				t.Errorf("backups %+v", p.backups)
			}
			if strings.Join(p.params.Units, ",") != "kafka.service" {
				t.Errorf("units %v", p.params.Units)
			}
			p.params.Marker = NewMarker()
			script, err := ApplyScript(p.params)
			if err != nil || !strings.Contains(string(script), "UNITS='kafka.service") {
				t.Errorf("apply script: %v, UNITS not set", err)
			}
		})
	}
}

func TestApplyScriptRejectsBadUnit(t *testing.T) {
	_, err := ApplyScript(ApplyParams{Marker: NewMarker(), RunID: "20261201T230000Z-abcd", Units: []string{"x';reboot;'.service"}})
	if err == nil || !strings.Contains(err.Error(), "bad unit name") {
		t.Errorf("err %v, want a refusal", err)
	}
}

func TestVerifyDropIn(t *testing.T) {
	c := dropInChange("kafka.service", "100000:524288")
	withUnit := func(l *facts.Limit) *facts.Facts {
		return &facts.Facts{Kafka: &facts.Kafka{Unit: &facts.BrokerUnit{Name: "kafka.service", NoFile: l}}, Sections: map[string]facts.SectionStatus{}}
	}
	for name, tt := range map[string]struct {
		f    *facts.Facts
		want string
	}{
		"as written":   {withUnit(&facts.Limit{Soft: 100000, Hard: 524288}), ""},
		"overridden":   {withUnit(&facts.Limit{Soft: 4096, Hard: 4096}), "systemd gives LimitNOFILE=4096 after the reload, want 100000:524288"},
		"not readable": {withUnit(nil), "could not be read back"},
		"no broker":    {&facts.Facts{Sections: map[string]facts.SectionStatus{}}, "could not be read back"},
	} {
		if got := verifyDropIn(tt.f, c); (tt.want == "" && got != "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q, want %q", name, got, tt.want)
		}
	}
}
