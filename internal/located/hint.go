package located

// The one hint syntax: every user-facing message that says what to do
// about it ends "MSG (hint: WHAT TO DO)", in a file (Error.Hint), in an
// error (Hint) or in a plain message (WithHint).

// WithHint is msg followed by what to do about it: "MSG (hint: WHAT)";
// msg alone when what is "".
func WithHint(msg, what string) string {
	if what == "" {
		return msg
	}
	return msg + " (hint: " + what + ")"
}

// Hinted is an error with what to do about it.
type Hinted struct {
	Err  error
	What string // what to do; may be empty
}

// Hint is err with what to do about it, rendered "ERR (hint: WHAT)";
// errors.Is and errors.As see err through it. Nil for a nil err.
func Hint(err error, what string) error {
	if err == nil {
		return nil
	}
	return &Hinted{Err: err, What: what}
}

func (h *Hinted) Error() string { return WithHint(h.Err.Error(), h.What) }

func (h *Hinted) Unwrap() error { return h.Err }
