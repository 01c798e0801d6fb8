package parse

import "testing"

func TestKafkaMetaRejects(t *testing.T) {
	for _, tt := range []struct{ name, body string }{
		{"node id not a number", "dir=/d\nmeta=node.id=one"},
		{"negative broker id", "dir=/d\nmeta=broker.id=-1"},
		{"line before any dir", "meta=node.id=1\ndir=/d"},
		{"a key the script never prints", "dir=/d\nmeta=ssl.keystore.password=x"},
		{"not a meta line", "dir=/d\nnode.id=1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if d, err := KafkaMeta(tt.body); err == nil {
				t.Errorf("accepted: %+v", d)
			}
		})
	}
}

func TestKafkaMetaStates(t *testing.T) {
	d, err := KafkaMeta("dir=/a\nmeta=node.id=4\nmeta=cluster.id=Xy3\ndir=/b\n!denied\ndir=/c\n!absent\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(d) != 3 || d[0].State != "" || d[0].Meta.ID() != 4 || d[0].Meta.ClusterID != "Xy3" ||
		d[1].State != "denied" || d[1].Meta != nil || d[2].State != "absent" {
		t.Errorf("got %+v", d)
	}
}
