package pipeline_test

import (
	"context"
	"fmt"
	"os"

	"github.com/kaudit/kaudit/pipeline"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/test/simhost"
)

// Audit the simulated demo fleet over real SSH on 127.0.0.1, then plan its
// fixes: what kaudit demo does, without the CLI.
func ExampleAudit() {
	dir, _ := os.MkdirTemp("", "kaudit-example-")
	defer os.RemoveAll(dir)
	fleet, err := simhost.Start(dir, simhost.DemoFleet(), "kafka-down-08")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer fleet.Close()
	r, err := pipeline.Audit(context.Background(), fleet.Hosts, pipeline.Config{Concurrency: 8, Profile: rules.DefaultProfile()})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d hosts, %d audited, %d unreachable, worst failure %s\n", r.Summary.Hosts, r.Summary.Audited, r.Summary.Unreachable, r.WorstFailure())
	fp := pipeline.PlanFix(r, fleet.Hosts, remediate.Selector{}, nil)
	fmt.Printf("fix: %s; %s not audited\n", fp.What(), fp.Unaudited[0].Name)
	// Output:
	// 10 hosts, 9 audited, 1 unreachable, worst failure critical
	// fix: 108 changes on 7 hosts; kafka-down-08 not audited
}
