// Package gather owns the one script kaudit runs on each host and the
// translation of its output into facts.
//
// The script (gather.sh) is POSIX sh, read-only, and prints sections framed
// by a per-run random marker (internal/remote owns the marker, the quoting
// and the section framing), so nothing a host prints (a login banner, a
// file that happens to contain a marker-like line) can forge a section.
// Parameters reach the script as single-quoted shell assignments of values
// that were validated first; the script itself arrives on stdin. Assemble
// turns each section into facts through one table, section name → parser
// (the parsers live in audit/parse).
package gather
