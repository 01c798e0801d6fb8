package inventory

import (
	"fmt"
	"reflect"
	"testing"
)

func TestSelect(t *testing.T) {
	fakeHome(t)
	inv := load(t, "testdata/good_kaudit.yaml")
	all := names(inv.Hosts)
	tests := []struct {
		limit string
		want  []string
	}{
		{"", all},
		{"  ", all},
		{"all", all}, // no group named all: every host
		{"prod-east", []string{"broker-1", "broker-2"}},
		{"prod", []string{"broker-1", "broker-2", "broker-3", "west-a", "west-b"}}, // through children
		{"broker-3", []string{"broker-3"}},
		{"laptop,stage-01", []string{"stage-01", "laptop"}}, // inventory order, not limit order
		{"broker-*", []string{"broker-1", "broker-2", "broker-3"}},
		{"stage-0?", []string{"stage-01", "stage-02"}},
		{"prod-*", []string{"broker-1", "broker-2", "broker-3", "west-a", "west-b"}}, // glob over group names
		{"prod, !broker-3", []string{"broker-1", "broker-2", "west-a", "west-b"}},
		{"prod,!prod-west", []string{"broker-1", "broker-2"}},
		{"!staging,!laptop", []string{"broker-1", "broker-2", "broker-3", "west-a", "west-b"}}, // only exclusions: start from all
		{"broker-1,broker-1,prod-east", []string{"broker-1", "broker-2"}},
		{"*", all},
	}
	for _, tt := range tests {
		t.Run(tt.limit, func(t *testing.T) {
			got, err := inv.Select(tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(names(got), tt.want) {
				t.Errorf("Select(%q) = %v, want %v", tt.limit, names(got), tt.want)
			}
		})
	}
}

func TestSelectErrors(t *testing.T) {
	fakeHome(t)
	inv := load(t, "testdata/good_kaudit.yaml")
	const file = "testdata/good_kaudit.yaml"
	hint := " (hint: check the spelling; globs use * and ?)"
	tests := []struct {
		limit string
		want  string
	}{
		{"prod-eats", `limit: "prod-eats" matches no host or group in ` + file + hint},
		{"prod,kafka-*", `limit: "kafka-*" matches no host or group in ` + file + hint},
		{"!broker-9", `limit: "broker-9" matches no host or group in ` + file + hint},
		{"nope,!nada", `limit: "nope" matches no host or group in ` + file + hint + "\n" +
			`limit: "nada" matches no host or group in ` + file + hint},
		{"prod,!prod", `limit: "prod,!prod" selects no hosts`},
		{"broker-[", `limit: invalid glob "broker-[": syntax error in pattern`},
		{"&prod", `limit: unsupported term "&prod" (hint: use NAME, GLOB or !NAME, separated by commas)`},
		{"!", `limit: unsupported term "!" (hint: use NAME, GLOB or !NAME, separated by commas)`},
	}
	for _, tt := range tests {
		t.Run(tt.limit, func(t *testing.T) {
			got, err := inv.Select(tt.limit)
			if err == nil {
				t.Fatalf("Select(%q) = %v, want an error", tt.limit, names(got))
			}
			if err.Error() != tt.want {
				t.Errorf("Select(%q) error:\n%v\nwant:\n%s", tt.limit, err, tt.want)
			}
		})
	}
}

func TestSelectAnsible(t *testing.T) {
	fakeHome(t)
	inv := load(t, "testdata/good_ansible.yaml")
	got, err := inv.Select("monitored,!*.west.example.com")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"broker02.east.example.com"}; !reflect.DeepEqual(names(got), want) {
		t.Errorf("got %v, want %v", names(got), want)
	}
	got, err = inv.Select("kafka_e*")
	if err != nil || len(got) != 6 {
		t.Errorf("kafka_e* = %v, %v; want the 6 east brokers", names(got), err)
	}
	// "all" is a real group in Ansible inventories.
	if got, err := inv.Select("all,!tools.example.com"); err != nil || len(got) != 8 {
		t.Errorf("all,!tools = %v, %v", names(got), err)
	}
}

func TestSelectEmptyGroup(t *testing.T) {
	fakeHome(t)
	inv, err := Parse("inv.yaml", []byte("groups:\n  spare:\nhosts:\n  b1:\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = inv.Select("spare")
	if err == nil || err.Error() != `limit: group "spare" has no hosts` {
		t.Errorf("err = %v", err)
	}
}

func ExampleInventory_Select() {
	inv, err := Parse("inventory.yaml", []byte(`
groups:
  east:
    hosts:
      broker-1: {address: 10.0.0.1}
      broker-2: {address: 10.0.0.2}
  west:
    hosts:
      broker-[3:4]:
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	hosts, _ := inv.Select("west,broker-1,!broker-4")
	for _, h := range hosts {
		fmt.Println(h.Name, h.Address, h.Groups)
	}
	_, err = inv.Select("esat")
	fmt.Println(err)
	// Output:
	// broker-1 10.0.0.1 [east]
	// broker-3 broker-3 [west]
	// limit: "esat" matches no host or group in inventory.yaml (hint: check the spelling; globs use * and ?)
}

func ExampleParse() {
	_, err := Parse("inventory.yaml", []byte(`
defaults:
  user: kafka
hosts:
  broker-1:
    port: 70000
  broker-2:
    adress: 10.0.0.2
    kafka: {config: "/etc/kafka/server.properties; rm -rf /"}
`))
	for _, e := range Errors(err) {
		fmt.Println(e)
	}
	// Output:
	// inventory.yaml:6: hosts.broker-1.port: port 70000 out of range 1-65535 (hint: SSH listens on 22 unless configured otherwise)
	// inventory.yaml:8: hosts.broker-2.adress: unknown key "adress" (hint: did you mean "address"?)
	// inventory.yaml:9: hosts.broker-2.kafka.config: path "/etc/kafka/server.properties; rm -rf /" contains ';', which is not allowed (hint: use an absolute path made of letters, digits and / . _ - + @ = , : % ~)
}
