package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/inventory"
)

func TestConnectSSHConfig(t *testing.T) {
	ssh, err := newRunner([]inventory.Host{{Name: "a", SSHConfig: false}}, ConnectConfig{})
	if err != nil || ssh.Config != nil {
		t.Fatalf("no host uses ssh_config: config %v, err %v", ssh.Config, err)
	}
	ssh.Close()
	dir := t.TempDir()
	if _, err := newRunner(nil, ConnectConfig{SSHConfig: filepath.Join(dir, "missing")}); err == nil || !strings.Contains(err.Error(), "hint: fix the file") {
		t.Errorf("missing --ssh-config: err %v, want the hint", err)
	}
	good := filepath.Join(dir, "config")
	if err := os.WriteFile(good, []byte("Host *\n  User kafka\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ssh, err = newRunner(nil, ConnectConfig{SSHConfig: good})
	if err != nil || ssh.Config == nil {
		t.Fatalf("an ssh_config file given: config %v, err %v", ssh.Config, err)
	}
	ssh.Close()
}
