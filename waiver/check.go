package waiver

import (
	"cmp"
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// WriteCheck lists ws as a table (where, state, rule, hosts/@groups/brokers, owner,
// expiry, reason) judged at now, flags those expiring within soon days,
// and returns how many have expired.
func WriteCheck(w io.Writer, ws Waivers, now time.Time, soon int) (expired int) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "WHERE\tSTATE\tRULE\tCOVERS\tOWNER\tEXPIRES\tREASON")
	for _, wv := range ws {
		if wv.Expired(now) {
			expired++
		}
		fmt.Fprintln(tw, checkRow(wv, now, soon))
	}
	tw.Flush()
	fmt.Fprintf(w, "\n%d waiver(s), %d expired\n", len(ws), expired)
	return expired
}

// checkRow is one waiver as a tab-separated row of WriteCheck.
func checkRow(wv Waiver, t time.Time, soon int) string {
	state := "active"
	switch {
	case wv.Expires.IsZero():
		state = "active (no expiry)"
	case wv.Expired(t):
		state = "EXPIRED"
	case wv.DaysLeft(t) <= soon:
		state = fmt.Sprintf("expires in %dd", wv.DaysLeft(t))
	}
	on := ""
	for _, h := range wv.Hosts {
		on += h + " "
	}
	for _, g := range wv.Groups {
		on += "@" + g + " "
	}
	for _, b := range wv.Brokers {
		on += "broker " + b + " "
	}
	exp := "-"
	if !wv.Expires.IsZero() {
		exp = wv.Expires.Format(DateLayout)
	}
	owner := wv.Owner
	owner = cmp.Or(owner, "-")
	return fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s", wv.Where(), state, wv.Rule, on, owner, exp, wv.Reason)
}
