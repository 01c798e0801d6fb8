package apply

import "github.com/kaudit/kaudit/internal/remote"

// The words of the step protocol (remote.Word): what a step's detail
// begins with where its protocol gives it a closed set of words. Each
// script's vocabulary below says which step says which; the .sh files
// document them at their top. They are read once, strictly, where the
// result lines are parsed (remote.ParseSteps): a word a step does not
// have is an error naming the host and the step.
const (
	wordAbsent  remote.Word = "absent"  // a file, a manifest: not there
	wordPresent remote.Word = "present" // there (a file's hash, mode and content follow)

	// A lease step: LEASE's six fields follow (sh/lib.sh).
	wordHeld      remote.Word = "held"      // another run's live lease refuses the step
	wordLost      remote.Word = "lost"      // the run's lease is gone, or another's
	wordTaken     remote.Word = "taken"     // a stale lease taken over
	wordFound     remote.Word = "found"     // the host's lease, listed (then the host's clock)
	wordMalformed remote.Word = "malformed" // a lease torn by a crash
	wordFree      remote.Word = "free"      // no other run's live lease: a restore or a restart goes on
	wordReleased  remote.Word = "released"
	wordNotHeld   remote.Word = "not-held"

	// What a restore did to one item.
	wordUnchanged remote.Word = "unchanged"
	wordRestored  remote.Word = "restored"
	wordRemoved   remote.Word = "removed"
	wordKept      remote.Word = "kept" // changed since the run: its current hash ("gone") or value follows

	wordOK     remote.Word = "ok" // the rollback's done
	wordFailed remote.Word = "failed"

	// A run directory on the host (HostRun.State).
	wordManifest remote.Word = "manifest"
	wordPartial  remote.Word = "partial"
	wordNone     remote.Word = "none"
)

var (
	heldWords    = remote.Says{OK: []remote.Word{wordFree}, Fail: []remote.Word{wordHeld}}
	presentWords = remote.Says{OK: []remote.Word{wordAbsent, wordPresent}}
	restoreWords = remote.Says{OK: []remote.Word{wordUnchanged, wordRestored, wordRemoved, wordKept}}

	readWords  = remote.Vocabulary{"lease": {Fail: heldWords.Fail}, "stale": {OK: []remote.Word{wordTaken, wordMalformed}}, "file": presentWords}
	applyWords = remote.Vocabulary{"lease": {Fail: []remote.Word{wordLost}}}
	// The rollback's lease: free when it starts, released or not-held at
	// its end (Release).
	rollbackWords = remote.Vocabulary{"lease": {OK: []remote.Word{wordFree, wordReleased, wordNotHeld}, Fail: heldWords.Fail}, "manifest": presentWords,
		"restore-file": restoreWords, "restore-sysctl": restoreWords, "restore-nic": restoreWords, "done": {OK: []remote.Word{wordOK, wordFailed}}}
	releaseWords  = remote.Vocabulary{"lease": {OK: []remote.Word{wordReleased, wordNotHeld}}}
	restartWords  = remote.Vocabulary{"lease": heldWords}
	manifestWords = remote.Vocabulary{"manifest": presentWords}
	runsWords     = remote.Vocabulary{"lease": {OK: []remote.Word{wordFound, wordMalformed}}, "run": {OK: []remote.Word{wordManifest, wordPartial, wordNone}}}
)
