package located

import (
	"errors"
	"io/fs"
)

// PathCause is err without the path an *fs.PathError repeats, for a
// message that names the file already.
func PathCause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
