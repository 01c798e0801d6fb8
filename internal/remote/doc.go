// Package remote owns what every script kaudit sends to a host has in
// common: the random per-run marker that frames its output, single-quoting
// of the values it is given, and the two framings of what it prints back.
//
//   - Sections (the gather script): "<marker> begin NAME", the body, then
//     "<marker> end NAME STATE", and a final "<marker> done".
//   - Result lines (the apply, read, restore and manifest scripts): one line
//     per step, "<marker> TAB STEP TAB ok|fail TAB DETAIL...", a step's
//     detail beginning with a typed Word where the script's Vocabulary
//     gives that step a closed set of words (ParseSteps).
//
// The marker is random per run, so nothing a host prints by accident (a
// login banner, a file holding a marker-like line) can be read as output.
// Everything a host prints is untrusted: lines without the marker are
// ignored, and the parsers never interpret a body.
package remote
