package parse

import (
	"os"
	"path/filepath"
	"testing"
)

// readTestdata returns testdata/<rel>, failing the test when it is missing.
func readTestdata(t testing.TB, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatalf("reading sample: %v", err)
	}
	return string(b)
}

// allSamples lists every file in testdata/<kind>/, so a sample added without
// a table entry still gets parsed (and must not panic).
func allSamples(t testing.TB, kind string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join("testdata", kind, "*"))
	if err != nil || len(m) == 0 {
		t.Fatalf("no samples in testdata/%s: %v", kind, err)
	}
	return m
}
