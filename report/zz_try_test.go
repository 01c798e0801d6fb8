package report
import ("testing";"os")
func TestTryGrouped(t *testing.T) {
	for _, n := range []int{1000, 10000} {
	r := simulatedFleet(t, n, 3)
	f, _ := os.Create("/tmp/h29_"+string(rune('0'+n/1000%10))+".html")
	if err := Render(f, "html", r, Options{}); err != nil { t.Fatal(err) }
	f.Close()
	}
}
