package parse

import (
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/nicpersist"
)

// NICs parses the gather script's nics section: per interface "@if NAME",
// "@driver NAME", "@ring" and "@features" followed by ethtool -g / -k
// output, and the persistence lines (nicpersist.Detect, nicpersist.Boot). A part ethtool could not
// read keeps its error in RingErr / FeatErr.
func NICs(body string) []facts.NIC {
	var out []facts.NIC
	var cur *facts.NIC
	var part string
	var buf strings.Builder
	flush := func() {
		if cur == nil {
			return
		}
		text := buf.String()
		switch part {
		case "ring":
			r, err := EthtoolRing(text)
			cur.Ring = r
			if err != nil {
				cur.RingErr = err.Error()
			}
		case "features":
			fs, err := EthtoolFeatures(text)
			cur.Features = fs
			if err != nil {
				cur.FeatErr = err.Error()
			}
		}
		buf.Reset()
		part = ""
	}
	var persist [][]string // per NIC in out: its persistence lines
	for _, line := range strings.Split(body, "\n") {
		switch {
		case strings.HasPrefix(line, "@if "):
			flush()
			out = append(out, facts.NIC{Name: strings.TrimSpace(line[4:])})
			persist = append(persist, nil)
			cur = &out[len(out)-1]
		case strings.HasPrefix(line, "@driver ") && cur != nil:
			cur.Driver = strings.TrimSpace(line[8:])
		case line == "@ring" || line == "@features":
			flush()
			part = line[1:]
		case cur != nil && strings.HasPrefix(line, "@"): // a persistence line (npersist in gather.sh)
			flush()
			persist[len(persist)-1] = append(persist[len(persist)-1], line)
		case part != "":
			buf.WriteString(line)
			buf.WriteByte('\n')
		}
	}
	flush()
	for i := range out {
		if persist[i] != nil {
			out[i].Persist = nicpersist.Detect(out[i].Name, out[i].Driver, persist[i])
			out[i].Boot = nicpersist.Boot(out[i].Name, out[i].Driver, out[i].Persist, persist[i])
		}
	}
	return out
}
