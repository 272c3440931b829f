//go:build !unix

package ticket_test

import "errors"

func mkfifo(string) error { return errors.ErrUnsupported }
