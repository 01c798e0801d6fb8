package whatif

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/kaudit/kaudit/internal/formats"
	"github.com/kaudit/kaudit/internal/termsafe"
	"github.com/kaudit/kaudit/report/diff"
	"github.com/kaudit/kaudit/rules"
)

var writers = formats.New[func(io.Writer, *Result) error]("what-if format")

func init() {
	writers.Register("json", formats.JSON[*Result])
	writers.Register("table", writeTable)
}

// Formats lists the formats the what-if can be written in, sorted.
func Formats() []string { return writers.Names() }

// Write renders w in format (one of Formats).
func Write(out io.Writer, format string, w *Result) error {
	fn, err := writers.Lookup(format)
	if err != nil {
		return err
	}
	return fn(out, w)
}

func writeTable(out io.Writer, w *Result) error {
	var b bytes.Buffer
	if w.PerHost {
		fmt.Fprintf(&b, "What if: upgrades planned per host (%d planned, %d without)\n", len(w.Plans), len(w.NoUpgrade))
	} else {
		var assumed []string
		if w.Assume.Kernel != "" {
			assumed = append(assumed, "kernel "+w.Assume.Kernel)
		}
		if w.Assume.Kafka != "" {
			assumed = append(assumed, "Kafka "+w.Assume.Kafka)
		}
		fmt.Fprintf(&b, "What if: %s\n", strings.Join(assumed, ", "))
	}
	for _, a := range w.Assumptions {
		fmt.Fprintf(&b, "  · %s\n", termsafe.Line(a)) // may quote a host's kernel or version
	}
	if err := diff.WriteUpgrade(&b, w.Upgrade, w.Facts); err != nil {
		return err
	}
	writeRestart(&b, w.Clusters)
	_, err := out.Write(b.Bytes())
	return err
}

// writeRestart is the rolling-restart verdict per cluster, then what
// blocks it after the upgrade.
func writeRestart(b *bytes.Buffer, clusters []RestartVerdict) {
	fmt.Fprintf(b, "\nSafe to rolling-restart? (%s must pass on every host)\n", strings.Join(rules.RestartGateRules(), ", "))
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "  CLUSTER\tHOSTS\tNOW\tAFTER UPGRADE\n")
	for _, v := range clusters {
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\n", v.Cluster, len(v.Hosts), verdict(v.SafeNow, v.BlockersNow), verdict(v.SafeAfter, v.BlockersAfter))
	}
	tw.Flush()
	for _, v := range clusters {
		if len(v.BlockersAfter) > 0 {
			fmt.Fprintf(b, "\n%s: blocking after the upgrade:\n", v.Cluster)
			for _, bl := range v.BlockersAfter {
				fmt.Fprintf(b, "  - %s\n", termsafe.Line(bl))
			}
		}
	}
}

func verdict(safe bool, blockers []string) string {
	if safe {
		return "SAFE"
	}
	return fmt.Sprintf("NOT SAFE (%d blocker(s))", len(blockers))
}
