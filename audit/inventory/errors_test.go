package inventory

import "errors"

// Errors unpacks an error returned by Load or Parse into its *Error values,
// in line order. Errors that are not *Error are skipped.
func Errors(err error) []*Error {
	if err == nil {
		return nil
	}
	var out []*Error
	var walk func(error)
	walk = func(err error) {
		if e, ok := err.(*Error); ok {
			out = append(out, e)
			return
		}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		var e *Error
		if errors.As(err, &e) {
			out = append(out, e)
		}
	}
	walk(err)
	return out
}
