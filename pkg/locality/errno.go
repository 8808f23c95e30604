package locality

import (
	"errors"
	"syscall"
	"unicode"
	"unicode/utf8"
)

// Strerror words an error the way strerror(3) does ("No such process"), as
// users see it in the Events of the tool Locus replaces. Go spells errno
// texts in lower case; other errors keep their text.
func Strerror(err error) string {
	if err == nil {
		return ""
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return err.Error()
	}
	s := errno.Error()
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}
